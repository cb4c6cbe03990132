// The thread that reads a capture ahead of the data plane (./read-ahead.ts has the model): for each stream asked for,
// it reads the file in order into the stream's slots in turn, waiting while they are all full, until the end of the
// file, a read that fails, or another stream asked for; then it says it has let go of the descriptor and the slots.

import { readSync } from "node:fs";
import { isMainThread, workerData } from "node:worker_threads";
import { describeIoError } from "../errors.js";
import type { ThreadData } from "../thread-module.js";
import { type FromReader, type ToReader, FILLED, LEFT, LENS, MAX_SLOTS, STREAM, TAKEN } from "./read-ahead.js";

function main({ control, port }: ThreadData): void {
  const c = new Int32Array(control);
  port.on("message", (m: ToReader) => {
    read(m);
    Atomics.store(c, LEFT, m.stream);
    Atomics.notify(c, LEFT);
  });

  function read({ fd, position: from, stream, slots }: ToReader): void {
    const bytes = new Uint8Array(slots.buffer);
    const size = slots.bytes;
    const count = slots.at.length;
    for (let k = 0, position = from; ; k++) {
      for (let taken = Atomics.load(c, TAKEN); k - taken >= count; taken = Atomics.load(c, TAKEN)) {
        if (Atomics.load(c, STREAM) !== stream) return;
        Atomics.wait(c, TAKEN, taken);
      }
      if (Atomics.load(c, STREAM) !== stream) return;
      const at = slots.at[k % count] ?? 0;
      let n = 0;
      try {
        for (let r = 1; n < size && r > 0; n += r) r = readSync(fd, bytes, at + n, size - n, position + n);
      } catch (err) {
        port.postMessage({ position: position + n, problem: describeIoError(err) } satisfies FromReader);
        n = -1;
      }
      Atomics.store(c, LENS + (k % MAX_SLOTS), n);
      Atomics.store(c, FILLED, k + 1);
      Atomics.notify(c, FILLED);
      if (n < size) return;
      position += n;
    }
  }
}

if (!isMainThread) main(workerData as ThreadData);
