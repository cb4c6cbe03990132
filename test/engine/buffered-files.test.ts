// BufferedFiles (src/engine/buffered-files.ts): many recording files written with few
// descriptors and bounded buffers. Each case appends chunks to files in turn
// and checks, after every append, the limits — and at the end every file, byte
// for byte.

import { crc32Reference } from "./crc32-reference.js";
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { type BufferedFile, type FileLimits, BufferedFiles } from "../../src/engine/buffered-files.js";
import { OutDir } from "../../src/out-dir.js";
import { concat } from "../pcap/builders.js";

let dir = "";
let claimed: OutDir | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-buffered-files-"));
});
afterEach(() => {
  claimed?.release();
  rmSync(dir, { recursive: true, force: true });
});

/** DIR claimed for links/f0.pcap … links/f<n-1>.pcap and links/a.pcap, links/b.pcap. */
function place(n: number): OutDir {
  const names = [...Array.from({ length: n }, (_, k) => `links/f${k}.pcap`), "links/a.pcap", "links/b.pcap"];
  claimed = OutDir.claim(dir, { command: "run", inputs: [], files: names });
  return claimed;
}

const header = (k: number): Uint8Array => new Uint8Array(24).fill(0x80 + (k % 64));
/** The bytes of the i-th write, `len` of them. */
const chunk = (i: number, len: number): Uint8Array => Uint8Array.from({ length: len }, (_, j) => (i * 31 + j) & 0xff);

type Limits = Omit<FileLimits, "threadAfter">;

describe.each([
  { mode: "on this thread", threadAfter: Infinity },
  { mode: "by the file writer's thread after 1,000 bytes", threadAfter: 1000 },
])("BufferedFiles, written $mode", ({ threadAfter }) => {
  it.each<{ name: string; files: number; writes: { file: number; len: number }[]; limits: Limits }>([
    {
      name: "one file, small writes: kept in its buffer, written at close",
      files: 1,
      writes: Array.from({ length: 50 }, () => ({ file: 0, len: 40 })),
      limits: { openMax: 4, fileBuffer: 4096, bufferedMax: 1 << 20 },
    },
    {
      name: "300 files in turn, 4 open at most: each opened again to append",
      files: 300,
      writes: Array.from({ length: 1500 }, (_, i) => ({ file: (i * 7) % 300, len: 20 + (i % 50) })),
      limits: { openMax: 4, fileBuffer: 256, bufferedMax: 4096 },
    },
    {
      name: "writes as long as a file's buffer: straight to the file, after what it buffered",
      files: 3,
      writes: [0, 1, 2, 0, 1, 2, 0].map((file, i) => ({ file, len: i % 2 === 0 ? 300 : 17 })),
      limits: { openMax: 2, fileBuffer: 256, bufferedMax: 1 << 20 },
    },
    {
      name: "buffers over the budget together: every one written and let go",
      files: 40,
      writes: Array.from({ length: 400 }, (_, i) => ({ file: i % 40, len: 33 })),
      limits: { openMax: 128, fileBuffer: 1024, bufferedMax: 2048 },
    },
    {
      name: "one descriptor for many files",
      files: 10,
      writes: Array.from({ length: 100 }, (_, i) => ({ file: (i * 3) % 10, len: 9 })),
      limits: { openMax: 1, fileBuffer: 64, bufferedMax: 256 },
    },
  ])("$name", ({ files: n, writes, limits }) => {
    const files = new BufferedFiles(place(n), { ...limits, threadAfter });
    // Write calls on this thread once the file writer's thread has the writes: none.
    let given = 0;
    let callsThen: number | undefined;
    const made: (BufferedFile | undefined)[] = [];
    const want: Uint8Array[][] = Array.from({ length: n }, (_, k) => [header(k)]);
    const path = (k: number): string => join(dir, "links", `f${k}.pcap`);
    writes.forEach(({ file: k, len }, i) => {
      let f = made[k];
      if (f === undefined) {
        f = files.file(`links/f${k}.pcap`, header(k));
        made[k] = f;
        given += header(k).length;
        // Made on its first bytes.
        expect(existsSync(path(k))).toBe(true);
      }
      const bytes = chunk(i, len);
      const memory = concat(new Uint8Array(5).fill(0xa5), bytes, new Uint8Array(3).fill(0xa5));
      files.append(f, memory, 5, len);
      given += len;
      if (given >= threadAfter) callsThen ??= files.writeCalls;
      want[k]?.push(bytes);
      expect(files.openCount).toBeLessThanOrEqual(limits.openMax);
      expect(files.held).toBeLessThanOrEqual(limits.bufferedMax + limits.fileBuffer);
    });
    expect(callsThen === undefined).toBe(threadAfter === Infinity);
    files.close();
    expect(files.openCount).toBe(0);
    if (callsThen !== undefined) expect(files.writeCalls).toBe(callsThen);
    else expect(files.writeCalls).toBeGreaterThan(0);
    for (let k = 0; k < n; k++) {
      const f = made[k];
      if (f === undefined) expect(existsSync(path(k))).toBe(false);
      else {
        expect(readFileSync(path(k)).equals(concat(...(want[k] ?? [])))).toBe(true);
        // The digest kept as it was written is the file's.
        expect(f.check.hex()).toBe(crc32Reference(readFileSync(path(k))));
      }
    }
  });

  it.each([
    {
      name: "a directory that is not there any more: cannot create",
      act: (files: BufferedFiles): void => {
        rmSync(join(dir, "links"), { recursive: true });
        files.file("links/a.pcap", header(0));
      },
      problem: /cannot create: .*(no such file|ENOENT)/i,
    },
    {
      name: "a file that appeared where strata makes one: cannot create, nothing written to it",
      act: (files: BufferedFiles): void => {
        writeFileSync(join(dir, "links", "a.pcap"), "kept");
        files.file("links/a.pcap", header(0));
      },
      problem: /links\/a\.pcap: cannot create: /,
    },
    {
      // Closed to make room for another, then replaced by a symbolic link: never written through.
      name: "a file replaced by a symbolic link while closed: cannot write, nothing written through it",
      act: (files: BufferedFiles): void => {
        const a = files.file("links/a.pcap", header(0));
        files.append(a, chunk(0, 600), 0, 600);
        files.file("links/b.pcap", header(1));
        unlinkSync(join(dir, "links", "a.pcap"));
        writeFileSync(join(dir, "elsewhere"), "kept");
        symlinkSync(join(dir, "elsewhere"), join(dir, "links", "a.pcap"));
        files.append(a, chunk(1, 600), 0, 600);
      },
      problem: /cannot write: /,
    },
  ])("refuses $name, one line", ({ act, problem }) => {
    const files = new BufferedFiles(place(0), { openMax: 1, fileBuffer: 512, bufferedMax: 4096, threadAfter });
    let error: unknown;
    try {
      act(files);
    } catch (err) {
      error = err;
    } finally {
      files.close();
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toMatch(problem);
    if (existsSync(join(dir, "elsewhere"))) expect(readFileSync(join(dir, "elsewhere"), "utf8")).toBe("kept");
    if (existsSync(join(dir, "links", "a.pcap")) && lstatSync(join(dir, "links", "a.pcap")).isFile())
      expect(readFileSync(join(dir, "links", "a.pcap"), "utf8")).toBe("kept");
  });
});
