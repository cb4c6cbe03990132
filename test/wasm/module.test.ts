import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";

/** RFC 1071 in the plainest form: 16-bit words, end-around carry. */
function referenceChecksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  return ~sum & 0xffff;
}

function randomPackets(n: number, seed: number): Uint8Array[] {
  let s = seed;
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8;
  return Array.from({ length: n }, () => Uint8Array.from({ length: next() % 1600 }, () => next() & 0xff));
}

describe("wasm boundary", () => {
  it("checksums a batch of packets written with one copy", () => {
    const dp = DataPlane.load();
    const packets = randomPackets(500, 7);
    const total = packets.reduce((n, p) => n + p.length, 0);
    // One contiguous staging buffer on the JS side, then one set() into linear memory.
    const staging = new Uint8Array(total);
    const refs = new Uint32Array(packets.length * 2);
    let at = 0;
    packets.forEach((p, i) => {
      staging.set(p, at);
      refs[2 * i] = at;
      refs[2 * i + 1] = p.length;
      at += p.length;
    });
    const refLen = dp.constant("PACKET_REF_LEN");
    const data = dp.alloc(total);
    const refsPtr = dp.alloc(packets.length * refLen);
    const out = dp.alloc(packets.length * 2);
    dp.mem.u8.set(staging, data);
    dp.mem.u32.set(refs, refsPtr >>> 2);
    dp.exports.checksumBatch(data, refsPtr, packets.length, out);
    const got = Array.from(dp.mem.u16.subarray(out >>> 1, (out >>> 1) + packets.length));
    expect(got).toEqual(packets.map(referenceChecksum));
  });

  it.each([
    { name: "empty", bytes: [] },
    { name: "odd length", bytes: [0x01] },
    { name: "RFC 1071 example", bytes: [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7] },
    { name: "all ones", bytes: [0xff, 0xff, 0xff, 0xff, 0xff] },
  ])("checksum edge case: $name", ({ bytes }) => {
    const dp = DataPlane.load();
    const data = dp.alloc(Math.max(bytes.length, 1));
    const refs = dp.alloc(8);
    const out = dp.alloc(2);
    dp.mem.u8.set(bytes, data);
    dp.mem.u32.set([0, bytes.length], refs >>> 2);
    dp.exports.checksumBatch(data, refs, 1, out);
    expect(dp.mem.u16[out >>> 1]).toBe(referenceChecksum(Uint8Array.from(bytes)));
  });

  it("re-creates its views after memory grows", () => {
    const dp = DataPlane.load();
    const before = dp.mem.u8;
    const size = before.byteLength;
    const big = dp.alloc(size * 2); // more than the module has: memory.grow
    expect(before.byteLength).toBe(0); // the old view is detached
    expect(dp.mem.u8.byteLength).toBeGreaterThan(size * 2);
    dp.mem.u8[big + size * 2 - 1] = 42;
    expect(dp.mem.u8[big + size * 2 - 1]).toBe(42);
  });
});
