// A submitted batch's byte limit (BatchQueue, src/engine/batches.ts): a packet fits beside what is queued while the
// bytes stay within the queue's room; an empty queue takes any packet, and a longer one grows the room; the batch
// taken holds the packets' bytes back to back. The room holds from the start, whether or not its buffer is made yet.

import { describe, expect, it } from "vitest";
import { BatchQueue } from "../../src/engine/batches.js";

const frame = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i + seed) & 0xff);

describe("BatchQueue", () => {
  it.each([
    { name: "an empty queue of 100 bytes", queued: [], fits: { 100: true, 101: true } },
    { name: "60 of 100 bytes queued", queued: [60], fits: { 40: true, 41: false } },
    { name: "60 then 40 of 100", queued: [60, 40], fits: { 0: true, 1: false } },
    { name: "a 150-byte frame alone grows the room to 200", queued: [150], fits: { 50: true, 51: false } },
    { name: "a 300-byte frame alone grows it to 300", queued: [300], fits: { 0: true, 1: false } },
  ])("$name", ({ queued, fits }) => {
    const q = new BatchQueue(4, 100);
    queued.forEach((n, k) => q.push(k, frame(n, k), n, n + 1, k, 10 * k));
    expect(Object.fromEntries(Object.keys(fits).map((n) => [n, q.fits(Number(n))]))).toEqual(
      Object.fromEntries(Object.entries(fits).map(([n, f]) => [n, f])),
    );
    const b = q.take();
    const total = queued.reduce((a, n) => a + n, 0);
    expect(b.count).toBe(queued.length);
    expect([...b.data.subarray(0, total)]).toEqual(queued.flatMap((n, k) => [...frame(n, k)]));
    expect([...b.offset.subarray(0, b.count)]).toEqual(
      queued.map((_, k) => queued.slice(0, k).reduce((a, n) => a + n, 0)),
    );
    expect([...b.origLen.subarray(0, b.count)]).toEqual(queued.map((n) => n + 1));
  });

  it("keeps the room a frame grew after a reset", () => {
    const q = new BatchQueue(4, 100);
    q.push(0, frame(150, 0), 150, 150, 0, 0);
    q.reset();
    q.push(0, frame(120, 1), 120, 120, 0, 0);
    expect([q.fits(80), q.fits(81)]).toEqual([true, false]);
  });

  it("is full at its packets", () => {
    const q = new BatchQueue(2, 100);
    q.push(0, frame(1, 0), 1, 1, 0, 0);
    expect(q.full).toBe(false);
    q.push(0, frame(1, 0), 1, 1, 0, 0);
    expect(q.full).toBe(true);
  });
});
