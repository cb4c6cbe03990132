// The thread that reads a capture ahead of the data plane (./read-ahead.ts has the model): for each stream asked for,
// it reads the file in order into the ring's slots, waiting while they are all full, until the end of the file, a read
// that fails, or another stream asked for; then it says it has let go of the descriptor.

import { readSync } from "node:fs";
import { isMainThread, workerData } from "node:worker_threads";
import { describeIoError } from "../errors.js";
import type { RingThreadData } from "../thread-module.js";
import { type FromReader, type ToReader, FILLED, LEFT, LENS, SLOT_BYTES, SLOTS, STREAM, TAKEN } from "./read-ahead.js";

function main({ ring, control, port }: RingThreadData): void {
  const bytes = new Uint8Array(ring);
  const c = new Int32Array(control);
  port.on("message", ({ fd, position, stream }: ToReader) => {
    read(fd, position, stream);
    Atomics.store(c, LEFT, stream);
    Atomics.notify(c, LEFT);
  });

  function read(fd: number, from: number, stream: number): void {
    for (let k = 0, position = from; ; k++) {
      for (let taken = Atomics.load(c, TAKEN); k - taken >= SLOTS; taken = Atomics.load(c, TAKEN)) {
        if (Atomics.load(c, STREAM) !== stream) return;
        Atomics.wait(c, TAKEN, taken);
      }
      if (Atomics.load(c, STREAM) !== stream) return;
      const at = (k % SLOTS) * SLOT_BYTES;
      let n = 0;
      try {
        for (let r = 1; n < SLOT_BYTES && r > 0; n += r) r = readSync(fd, bytes, at + n, SLOT_BYTES - n, position + n);
      } catch (err) {
        port.postMessage({ position: position + n, problem: describeIoError(err) } satisfies FromReader);
        n = -1;
      }
      Atomics.store(c, LENS + (k % SLOTS), n);
      Atomics.store(c, FILLED, k + 1);
      Atomics.notify(c, FILLED);
      if (n < SLOT_BYTES) return;
      position += n;
    }
  }
}

if (!isMainThread) main(workerData as RingThreadData);
