// The thread that writes a run's recording files once they are large (./file-writer.ts has the model): it takes each
// write from the shared ring, writes it to its descriptor (the process's, shared by every thread) and keeps each file's
// CRC-32 of what it wrote, in order; after each message it bumps the counter the main thread waits on.

import { writeSync } from "node:fs";
import { isMainThread, type MessagePort, workerData } from "node:worker_threads";
import { crc32 } from "node:zlib";
import { describeIoError } from "../errors.js";
import { crc32Combine } from "./checksum.js";
import type { RingThreadData } from "../thread-module.js";
import { type ToWriter, DONE, FAILED } from "./file-writer.js";

function main({ ring, control, port }: RingThreadData): void {
  const bytes = new Uint8Array(ring);
  const counters = new Int32Array(control);
  /** Per file id: the CRC-32 and length of what this thread wrote to it. */
  const written = new Map<number, { crc: number; len: number }>();
  const failed = new Set<number>();
  port.on("message", (m: ToWriter) => {
    if (m.kind === "write") {
      if (!failed.has(m.id)) {
        // From a lent memory, where it lies; else from the ring.
        const data = (m.lent === undefined ? bytes : new Uint8Array(m.lent)).subarray(m.start, m.start + m.len);
        try {
          for (let done = 0; done < m.len;) done += writeSync(m.fd, data, done, m.len - done);
          const w = written.get(m.id) ?? { crc: 0, len: 0 };
          w.crc = m.crc < 0 ? crc32(data, w.crc) : crc32Combine(w.crc, m.crc, m.len);
          w.len += m.len;
          written.set(m.id, w);
        } catch (err) {
          failed.add(m.id);
          port.postMessage({ kind: "failed", path: m.path, problem: describeIoError(err) });
          Atomics.store(counters, FAILED, 1);
        }
      }
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

if (!isMainThread) main(workerData as RingThreadData);
