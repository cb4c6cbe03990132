// A file read ahead by the process's reader thread (src/pcap/read-ahead.ts) straight into slots the caller names: the
// slots taken in turn hold the file's bytes in order, a slot held is not written while the thread reads on, nothing is
// written outside them; the end of the file at a slot's end or inside one gives 0 after the last byte; a read that
// fails in the thread is thrown, as the capture reader's words, and leaves the thread free for the next file.

import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AheadFile, type AheadSlots, ReadAhead } from "../../src/pcap/index.js";

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-read-ahead-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `len` bytes, each its offset's own pattern (a byte out of place shows). */
function bytes(len: number): Uint8Array {
  const b = new Uint8Array(len);
  for (let i = 0; i < len; i++) b[i] = (i * 7 + (i >>> 11)) & 0xff;
  return b;
}

const SLOT = 1 << 16;

/** Two or three slots of SLOT bytes in a shared buffer, apart, with guard bytes around each. */
function slotsOf(count: number): AheadSlots {
  const buffer = new SharedArrayBuffer(count * (SLOT + 64) + 64);
  new Uint8Array(buffer).fill(0xa5);
  return { buffer, at: Array.from({ length: count }, (_, k) => 64 + k * (SLOT + 64)), bytes: SLOT };
}

function opened(file: AheadFile, position: number, slots: AheadSlots): ReadAhead {
  const ahead = ReadAhead.open(file, position, slots);
  if (ahead === undefined) throw new Error("the reader thread is busy");
  return ahead;
}

interface Case {
  readonly name: string;
  readonly size: number;
  /** Where the stream starts. */
  readonly from: number;
  readonly slots: number;
}

const CASES: Case[] = [
  {
    name: "two slots in turn, past several wraps, to an end inside a slot",
    size: 7 * SLOT + 12_345,
    from: 24,
    slots: 2,
  },
  { name: "three slots", size: 5 * SLOT + 1, from: 0, slots: 3 },
  { name: "the end of the file at a slot's end: a slot of 0 after the last", size: 2 * SLOT, from: 0, slots: 2 },
  { name: "from inside the file, less than a slot left", size: SLOT + 5000, from: SLOT - 3000, slots: 2 },
  { name: "an empty file", size: 0, from: 0, slots: 2 },
];

describe("a file read ahead by the reader thread into the caller's slots", () => {
  it.each(CASES)("$name", (c) => {
    const file = join(dir, "f.bin");
    const want = bytes(c.size);
    writeFileSync(file, want);
    const fd = openSync(file, "r");
    const slots = slotsOf(c.slots);
    const mem = new Uint8Array(slots.buffer);
    const ahead = opened({ fd, name: file }, c.from, slots);
    try {
      let at = c.from;
      for (let k = 0; ; k++) {
        const n = ahead.next();
        expect({ slot: ahead.slot, n }).toEqual({ slot: k % c.slots, n: Math.min(SLOT, c.size - at) });
        const place = slots.at[ahead.slot] ?? 0;
        // Held while the thread reads on into the others: still the file's bytes after it has had time to.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        expect(Buffer.from(mem.subarray(place, place + n)).equals(want.subarray(at, at + n))).toBe(true);
        at += n;
        if (n < SLOT) break;
      }
      expect(at).toBe(c.size);
      // Nothing written outside the slots.
      const guards = [0, ...slots.at.map((p) => p + SLOT)].map((p) => mem.subarray(p, p + 64));
      expect(guards.every((g) => g.every((b) => b === 0xa5))).toBe(true);
    } finally {
      ahead.stop();
      closeSync(fd);
    }
  });

  it("a read that fails in the thread: thrown as the capture reader's, the thread free after", () => {
    const fd = openSync(dir, "r"); // a directory: read() fails with EISDIR
    try {
      const ahead = opened({ fd, name: "capture.pcap" }, 0, slotsOf(2));
      expect(ReadAhead.open({ fd, name: "another.pcap" }, 0, slotsOf(2))).toBeUndefined(); // one file at a time
      expect(() => ahead.next()).toThrow(/^capture\.pcap: byte 0: cannot read: .*directory/i);
    } finally {
      closeSync(fd);
    }
    const file = join(dir, "after.bin");
    writeFileSync(file, bytes(100));
    const after = openSync(file, "r");
    const slots = slotsOf(2);
    const ahead = opened({ fd: after, name: file }, 0, slots);
    expect(ahead.next()).toBe(100);
    expect(ahead.next()).toBe(0);
    ahead.stop();
    closeSync(after);
  });
});
