// The coordinator's cut of a replay's inputs into chunks of `size` packets, as src/run/chunk-runner.ts cuts them for
// threads (the same packets, numbered the same): each chunk's packets as parts (a batch, or its slice in the chunk,
// encoded at once into one payload: a batch is valid only until the next is read), and with --shared, first, as a
// byte range of the one capture where a replay reads it in blocks (./shared-input.ts): the range's records are parsed
// here (in wasm, not copied out) only to count them and find where each chunk's range ends.

import { sliceBatch } from "../engine/batches.js";
import type { Engine } from "../engine/engine.js";
import { BLOCK_PACKETS, BlockReader } from "../run/blocks.js";
import type { Inputs } from "../run/inputs.js";
import { PacketsWriter } from "./chunk-codec.js";
import type { InputRange } from "./protocol.js";
import type { UpdateSchedule } from "../run/updates.js";
import { PCAP_HEADER_LEN } from "./shared-input.js";

/** A chunk as cut: its first packets as a range of the shared capture (if any), then its other packets' parts. */
export interface CutChunk {
  readonly input?: InputRange;
  /** The other packets' parts as one payload (valid until the chunk's callback returns), if there are any. */
  payload?: Buffer;
  readonly first: number;
  packets: number;
  /** With updates: how many were applied before the chunk's first packet. */
  readonly updatesBefore: number;
}

/**
 * Reads `inputs` to the end and hands each chunk to `chunk`, in order. `shared`: the one input's path under --shared,
 * when its records are to go as ranges (never with a schedule). `schedule`: the run's updates, applied on `engine` as
 * the packets pass their times, the parts cut at them as a one-thread replay cuts its batches.
 */
export async function cutChunks(
  inputs: Inputs,
  engine: Engine,
  size: number,
  how: { readonly shared: string | undefined; readonly schedule: UpdateSchedule | undefined },
  chunk: (c: CutChunk) => Promise<void>,
): Promise<void> {
  const { shared, schedule } = how;
  let current: CutChunk | undefined;
  /** The replay's number of the next packet. */
  let number = 0;
  const direct = shared === undefined ? undefined : inputs.blocks();
  if (direct !== undefined && shared !== undefined) {
    const header = Buffer.alloc(PCAP_HEADER_LEN);
    direct.blocks.read(header, 0, PCAP_HEADER_LEN, 0);
    const reader = new BlockReader(engine.inputArea, direct.blocks, direct.injection);
    for (let stopped = false; !stopped;) {
      const [offset, start, end] = [reader.offset, number, (Math.floor(number / size) + 1) * size];
      while (number < end) {
        const n = reader.next(Math.min(BLOCK_PACKETS, end - number));
        if (n === 0) {
          stopped = true;
          break;
        }
        number += n;
      }
      if (number === start) break;
      const length = reader.offset - offset;
      const input = { file: shared, header: header.toString("hex"), offset, length, packets: number - start };
      current = { input, first: start, packets: number - start, updatesBefore: 0 };
      if (number === end) {
        await chunk(current);
        current = undefined;
      }
    }
    direct.read(reader.offset, number);
  }
  const writer = new PacketsWriter();
  const done = async (c: CutChunk): Promise<void> => {
    if (writer.parts > 0) c.payload = writer.take();
    await chunk(c);
  };
  for (const read of inputs.batches()) {
    for (const batch of schedule === undefined ? [read] : schedule.cut(read, number)) {
      for (let i = 0; i < batch.count;) {
        const id = Math.floor(number / size);
        if (current !== undefined && Math.floor(current.first / size) !== id) {
          await done(current);
          current = undefined;
        }
        // The updates due at this packet are applied (cut() applies them before it hands on the part): they are the
        // chunk's to apply first, as a one-thread replay applied them before the packet.
        current ??= { first: number, packets: 0, updatesBefore: schedule?.appliedCount ?? 0 };
        const end = Math.min(batch.count, i + (id + 1) * size - number);
        writer.add(i === 0 && end === batch.count ? batch : sliceBatch(batch, i, end));
        current.packets += end - i;
        number += end - i;
        i = end;
      }
    }
  }
  if (current !== undefined) await done(current);
}
