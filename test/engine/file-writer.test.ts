// FileWriter (src/engine/file-writer.ts): writes handed to a thread through a shared ring. Each case gives writes of
// the sizes listed, to files in turn, through a ring smaller than what they add up to (so the ring wraps, fills and
// waits for the thread), and checks every file byte for byte and the CRC-32 the thread kept of it. Writes from a lent
// shared memory (the data plane's, whose records stay put until settle()) are written where they lie, not copied.

import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { FileWriter, lend, unlend } from "../../src/engine/file-writer.js";
import { crc32Reference } from "./crc32-reference.js";

const dir = mkdtempSync(join(tmpdir(), "strata-file-writer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bytes of the i-th write, `len` of them. */
const chunk = (i: number, len: number): Uint8Array => Uint8Array.from({ length: len }, (_, j) => (i * 37 + j) & 0xff);

describe("FileWriter", () => {
  it.each([
    {
      name: "writes that fill the ring exactly, in turn to 3 files",
      ring: 64,
      files: 3,
      lens: [16, 16, 16, 16, 16, 16],
    },
    { name: "writes that leave a gap at the ring's end", ring: 64, files: 2, lens: [10, 20, 30, 15, 16, 9, 33, 1] },
    { name: "writes longer than a quarter of the ring: cut", ring: 64, files: 2, lens: [100, 3, 64, 17, 200] },
    {
      name: "many writes of every size, one file",
      ring: 256,
      files: 1,
      lens: Array.from({ length: 400 }, (_, i) => 1 + ((i * 13) % 64)),
    },
    {
      name: "many writes of every size, 5 files",
      ring: 100,
      files: 5,
      lens: Array.from({ length: 400 }, (_, i) => 1 + ((i * 7) % 40)),
    },
  ])("$name", ({ ring, files: n, lens }) => {
    const writer = new FileWriter(ring);
    try {
      const paths = Array.from({ length: n }, (_, k) => join(dir, `${ring}-${lens.length}-${k}`));
      const fds = paths.map((p) => openSync(p, "wx"));
      const ids = paths.map(() => writer.id());
      const want: Uint8Array[][] = paths.map(() => []);
      lens.forEach((len, i) => {
        const bytes = chunk(i, len);
        // The write's own CRC-32 given for every other one: the thread combines it rather than reading them.
        const memory = new Uint8Array([0xa5, ...bytes, 0xa5]);
        const crc = i % 2 === 0 ? Number.parseInt(crc32Reference(bytes), 16) : undefined;
        writer.write(fds[i % n] ?? -1, ids[i % n] ?? -1, paths[i % n] ?? "", memory, 1, len, crc);
        want[i % n]?.push(bytes);
      });
      writer.drain();
      const written = writer.finish(ids);
      for (const fd of fds) closeSync(fd);
      paths.forEach((p, k) => {
        const bytes = readFileSync(p);
        expect(Buffer.concat(want[k] ?? []).equals(bytes)).toBe(true);
        expect(written[k]?.len).toBe(bytes.length);
        expect(((written[k]?.crc ?? 0) >>> 0).toString(16).padStart(8, "0")).toBe(crc32Reference(bytes));
      });
    } finally {
      writer.close();
    }
  });

  it("refuses a write that fails, one line naming the file", () => {
    const writer = new FileWriter(64);
    try {
      const path = join(dir, "read-only");
      closeSync(openSync(path, "wx"));
      const fd = openSync(path, "r");
      writer.write(fd, writer.id(), path, chunk(0, 10), 0, 10);
      let error: unknown;
      try {
        writer.drain();
      } catch (err) {
        error = err;
      }
      closeSync(fd);
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toMatch(/read-only: cannot write: /);
    } finally {
      writer.close();
    }
  });

  it.each([
    { name: "from a lent memory: written where they lie, none copied", lent: true, grown: false },
    { name: "from a memory not lent: copied into the ring", lent: false, grown: false },
    { name: "from a lent memory grown since (a new buffer, not lent): copied", lent: true, grown: true },
  ])("$name", ({ lent, grown }) => {
    const writer = new FileWriter(64);
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 4, shared: true });
    try {
      const lens = [1000, 17, 4096, 300];
      const paths = [0, 1].map((k) => join(dir, `lent-${String(lent)}-${String(grown)}-${k}`));
      const fds = paths.map((p) => openSync(p, "wx"));
      const ids = paths.map(() => writer.id());
      const want: Uint8Array[][] = paths.map(() => []);
      if (lent) lend(memory);
      if (grown) memory.grow(1);
      let at = 8;
      lens.forEach((len, i) => {
        const bytes = chunk(i, len);
        const u8 = new Uint8Array(memory.buffer);
        u8.set(bytes, at);
        writer.write(fds[i % 2] ?? -1, ids[i % 2] ?? -1, paths[i % 2] ?? "", u8, at, len);
        want[i % 2]?.push(bytes);
        at += len + 8;
      });
      unlend(memory);
      writer.settle(memory);
      new Uint8Array(memory.buffer).fill(0xee); // after settle(): the files hold what was there before
      writer.drain();
      const written = writer.finish(ids);
      for (const fd of fds) closeSync(fd);
      const where = lent && !grown;
      expect({ lent: writer.lentWrites, copied: writer.copiedWrites }).toEqual({
        lent: where ? lens.length : 0,
        copied: where ? 0 : lens.length,
      });
      paths.forEach((p, k) => {
        const bytes = readFileSync(p);
        expect(Buffer.concat(want[k] ?? []).equals(bytes)).toBe(true);
        expect(((written[k]?.crc ?? 0) >>> 0).toString(16).padStart(8, "0")).toBe(crc32Reference(bytes));
      });
    } finally {
      writer.close();
    }
  });
});
