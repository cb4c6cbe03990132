// The thread that writes a run's recording files once they are large (./file-writer.ts has the model): it takes each
// write from the shared ring, writes it to its descriptor (the process's, shared by every thread) and keeps each file's
// CRC-32 of what it wrote, in order; after each message it bumps the counter the main thread waits on. A recording
// ring handed off whole ("group") it groups first, each recording's records one after the other, as the data plane's
// recordingsGather would (assembly/pipeline/recording.ts), then writes each recording's span to its file.

import { writeSync } from "node:fs";
import { isMainThread, workerData } from "node:worker_threads";
import { crc32 } from "node:zlib";
import { describeIoError } from "../errors.js";
import { crc32Combine } from "./checksum.js";
import type { RingThreadData } from "../thread-module.js";
import { type ToWriter, DONE, FAILED } from "./file-writer.js";

/** A ring record's header: recording u32, len u32 (assembly/pipeline/recording.ts, RINGREC_SIZE). */
const RING_RECORD_HEADER = 8;

type Group = Extract<ToWriter, { kind: "group" }>;

function main({ ring, control, port }: RingThreadData): void {
  const bytes = new Uint8Array(ring);
  const counters = new Int32Array(control);
  /** Per file id: the CRC-32 and length of what this thread wrote to it. */
  const written = new Map<number, { crc: number; len: number }>();
  const failed = new Set<number>();
  const fail = (id: number, path: string, problem: string): void => {
    failed.add(id);
    port.postMessage({ kind: "failed", path, problem });
    Atomics.store(counters, FAILED, 1);
  };
  /** Writes data to `fd`, file `id`; `crc`: its CRC-32 if known, else −1. */
  const write = (fd: number, id: number, path: string, data: Uint8Array, crc: number): void => {
    if (failed.has(id)) return;
    try {
      for (let done = 0; done < data.length;) done += writeSync(fd, data, done, data.length - done);
      const w = written.get(id) ?? { crc: 0, len: 0 };
      w.crc = crc < 0 ? crc32(data, w.crc) : crc32Combine(w.crc, crc, data.length);
      w.len += data.length;
      written.set(id, w);
    } catch (err) {
      fail(id, path, describeIoError(err));
    }
  };
  port.on("message", (m: ToWriter) => {
    if (m.kind === "write") {
      // From a lent memory, where it lies; else from the ring.
      const data = (m.lent === undefined ? bytes : new Uint8Array(m.lent)).subarray(m.start, m.start + m.len);
      write(m.fd, m.id, m.path, data, m.crc);
    } else if (m.kind === "group") {
      group(m, write, fail);
    } else {
      port.postMessage({ kind: "written", files: m.ids.map((id) => written.get(id) ?? { crc: 0, len: 0 }) });
      for (const id of m.ids) {
        written.delete(id);
        failed.delete(id);
      }
    }
    Atomics.add(counters, DONE, 1);
    Atomics.notify(counters, DONE);
  });
}

/**
 * Groups the ring's records by recording into m.to (two walks: each recording's bytes, then each record copied to its
 * recording's span) and writes each recording's span to its file, in the order of m.files.
 */
function group(
  m: Group,
  write: (fd: number, id: number, path: string, data: Uint8Array, crc: number) => void,
  fail: (id: number, path: string, problem: string) => void,
): void {
  const mem = new Uint8Array(m.lent);
  const view = new DataView(m.lent);
  const files = m.files;
  const n = files.length / 3;
  /** Per recording, its place in m.files (−1: none). */
  const slot = new Int32Array(m.count).fill(-1);
  for (let k = 0; k < n; k++) slot[files[3 * k] ?? 0] = k;
  const lens = new Float64Array(n);
  const end = m.start + m.len;
  let stray = -1;
  for (let at = m.start; at < end;) {
    const c = view.getUint32(at, true);
    const len = view.getUint32(at + 4, true);
    const k = slot[c] ?? -1;
    if (k >= 0) lens[k] = (lens[k] ?? 0) + len;
    else stray = c;
    at += RING_RECORD_HEADER + len;
  }
  const ends = new Float64Array(n);
  let start = m.to;
  for (let k = 0; k < n; k++) {
    ends[k] = start;
    start += lens[k] ?? 0;
  }
  for (let at = m.start; at < end;) {
    const c = view.getUint32(at, true);
    const len = view.getUint32(at + 4, true);
    const k = slot[c] ?? -1;
    if (k >= 0) {
      const to = ends[k] ?? 0;
      mem.copyWithin(to, at + RING_RECORD_HEADER, at + RING_RECORD_HEADER + len);
      ends[k] = to + len;
    }
    at += RING_RECORD_HEADER + len;
  }
  for (let k = 0; k < n; k++) {
    const len = lens[k] ?? 0;
    if (len === 0) continue;
    const e = ends[k] ?? 0;
    write(files[3 * k + 1] ?? -1, files[3 * k + 2] ?? -1, m.paths[k] ?? "", mem.subarray(e - len, e), -1);
  }
  // A programmer's error: the main thread makes a recording's file before it hands on a ring with its records.
  if (stray >= 0) fail(-1 - stray, `recording ${stray}`, "no file for its records");
}

if (!isMainThread) main(workerData as RingThreadData);
