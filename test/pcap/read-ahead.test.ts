// A file read ahead by the process's reader thread (src/pcap/read-ahead.ts): reads in order of any length, across the
// ring's slots and its wrap, give the file's bytes; a read elsewhere starts the stream again there; the end of the file
// at a slot's end or inside one gives 0 after the last byte; a read that fails in the thread is thrown, as the capture
// reader's words, and leaves the thread free for the next file.

import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AheadFile, ReadAhead } from "../../src/pcap/index.js";
import { SLOT_BYTES, SLOTS } from "../../src/pcap/read-ahead.js";

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

function opened(file: AheadFile, position: number): ReadAhead {
  const ahead = ReadAhead.open(file, position);
  if (ahead === undefined) throw new Error("the reader thread is busy");
  return ahead;
}

interface Case {
  readonly name: string;
  readonly size: number;
  /** Where the stream starts. */
  readonly from: number;
  /** Each read: its position (`next`: where the last one stopped) and length. */
  readonly reads: readonly { readonly at: number | "next"; readonly len: number }[];
}

const SLOT = SLOT_BYTES;
const CASES: Case[] = [
  {
    name: "in order, 1 MiB less a few bytes at a time, past the ring's wrap, to an end inside a slot",
    size: (SLOTS + 2) * SLOT + 12_345,
    from: 24,
    reads: Array.from({ length: SLOTS + 4 }, () => ({ at: "next" as const, len: SLOT - 100 })),
  },
  {
    name: "the end of the file at a slot's end: the last read whole, then 0",
    size: 2 * SLOT,
    from: 0,
    reads: [
      { at: "next", len: 2 * SLOT },
      { at: "next", len: 10 },
    ],
  },
  {
    name: "small reads across a slot's end",
    size: SLOT + 5000,
    from: SLOT - 3000,
    reads: Array.from({ length: 4 }, () => ({ at: "next" as const, len: 2000 })),
  },
  {
    name: "a read elsewhere, back and then on: the stream starts again there",
    size: 3 * SLOT,
    from: 0,
    reads: [
      { at: "next", len: SLOT + 17 },
      { at: 100, len: 5000 },
      { at: 2 * SLOT + 9, len: SLOT },
      { at: "next", len: 10 },
    ],
  },
  { name: "an empty file", size: 0, from: 0, reads: [{ at: "next", len: 100 }] },
];

describe("a file read ahead by the reader thread", () => {
  it.each(CASES)("$name", (c) => {
    const file = join(dir, "f.bin");
    const want = bytes(c.size);
    writeFileSync(file, want);
    const fd = openSync(file, "r");
    const ahead = opened({ fd, name: file }, c.from);
    try {
      let next = c.from;
      for (const r of c.reads) {
        const at = r.at === "next" ? next : r.at;
        const buf = new Uint8Array(r.len + 8).fill(0xa5);
        const n = ahead.read(buf, 8, r.len, at);
        expect(n).toBe(Math.max(0, Math.min(r.len, c.size - at)));
        expect(buf.subarray(0, 8).every((b) => b === 0xa5)).toBe(true);
        expect(Buffer.from(buf.subarray(8, 8 + n)).equals(want.subarray(at, at + n))).toBe(true);
        next = at + n;
      }
    } finally {
      ahead.stop();
      closeSync(fd);
    }
  });

  it("a read that fails in the thread: thrown as the capture reader's, the thread free after", () => {
    const fd = openSync(dir, "r"); // a directory: read() fails with EISDIR
    try {
      const ahead = opened({ fd, name: "capture.pcap" }, 0);
      expect(ReadAhead.open({ fd, name: "another.pcap" }, 0)).toBeUndefined(); // one file at a time
      expect(() => ahead.read(new Uint8Array(64), 0, 64, 0)).toThrow(
        /^capture\.pcap: byte 0: cannot read: .*directory/i,
      );
    } finally {
      closeSync(fd);
    }
    const file = join(dir, "after.bin");
    writeFileSync(file, bytes(100));
    const after = openSync(file, "r");
    const ahead = opened({ fd: after, name: file }, 0);
    const buf = new Uint8Array(100);
    expect(ahead.read(buf, 0, 100, 0)).toBe(100);
    ahead.stop();
    closeSync(after);
  });
});
