// CRC-32 put together from its parts (crc32Combine, RunningCrc.append): what a replay's main thread
// does with the CRC-32 a worker thread worked out for its chunk's records, equal to the CRC-32 of
// the bytes one after the other, checked against the bitwise reference.

import { describe, expect, it } from "vitest";
import { crc32Combine, crcHex, RunningCrc } from "../../src/engine/checksum.js";
import { crc32Reference } from "./crc32-reference.js";

const bytes = (n: number, seed: number): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * 131 + seed) & 0xff);
const crc = (b: Uint8Array): number => Number.parseInt(crc32Reference(b), 16);

describe("CRC-32 combined from parts", () => {
  it.each([
    { a: 0, b: 0 },
    { a: 1, b: 0 },
    { a: 0, b: 5 },
    { a: 10, b: 17 },
    { a: 24, b: 65_536 },
    { a: 1000, b: 70_001 },
    { a: 3, b: 1 << 20 },
  ])("$a bytes then $b bytes", ({ a, b }) => {
    const x = bytes(a, 7);
    const y = bytes(b, 11);
    const whole = new Uint8Array(a + b);
    whole.set(x);
    whole.set(y, a);
    expect(crcHex(crc32Combine(crc(x), crc(y), b))).toBe(crc32Reference(whole));
  });

  it("a running CRC takes parts updated and parts appended by their CRC alike", () => {
    const parts = [bytes(24, 1), bytes(4096, 2), bytes(0, 3), bytes(300_000, 4), bytes(80, 5)];
    const running = new RunningCrc();
    parts.forEach((p, k) => (k % 2 === 0 ? running.update(p) : running.append(crc(p), p.length)));
    const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (whole.set(p, at), at + p.length), 0);
    expect(running.hex()).toBe(crc32Reference(whole));
  });
});
