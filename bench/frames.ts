// The packets the benchmarks send: 64-byte frames in batches, already in memory, between MAC indices picked at random
// (a seeded generator: every run the same), or IPv4 to the router's prefixes.

import type { InputBatch } from "../src/wasm/runner.js";

export const FRAME_LEN = 64;
export const BATCH = 256;

/** 64-byte Ethernet frames, dst/src given as MAC indices; batches of BATCH packets. */
export function frames(pairs: readonly (readonly [number, number])[], endpoints: readonly number[]): InputBatch[] {
  const batches: InputBatch[] = [];
  for (let start = 0; start < pairs.length; start += BATCH) {
    const n = Math.min(BATCH, pairs.length - start);
    const data = new Uint8Array(n * FRAME_LEN);
    for (let i = 0; i < n; i++) {
      const [dst, src] = pairs[start + i] ?? [0, 0];
      const f = data.subarray(i * FRAME_LEN, (i + 1) * FRAME_LEN);
      f.set([0x02, 0, (dst >>> 24) & 0xff, (dst >>> 16) & 0xff, (dst >>> 8) & 0xff, dst & 0xff], 0);
      f.set([0x02, 0, (src >>> 24) & 0xff, (src >>> 16) & 0xff, (src >>> 8) & 0xff, src & 0xff], 6);
      f[12] = 0x08;
      f[13] = 0x00;
      f[14] = 0x45;
    }
    batches.push({
      data,
      count: n,
      offset: Uint32Array.from({ length: n }, (_, i) => i * FRAME_LEN),
      capLen: new Uint32Array(n).fill(FRAME_LEN),
      origLen: new Uint32Array(n).fill(FRAME_LEN),
      tsSec: new Float64Array(n).fill(1_700_000_000),
      tsNsec: Uint32Array.from({ length: n }, (_, i) => start + i),
      endpoint: Uint32Array.from({ length: n }, (_, i) => endpoints[(start + i) % endpoints.length] ?? 0),
    });
  }
  return batches;
}

/** Random (dst, src) MAC index pairs: dst in 1..n, src ≠ dst. */
export function randomPairs(count: number, n: number, seed = 1): [number, number][] {
  let s = seed;
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8;
  return Array.from({ length: count }, () => {
    const dst = (next() % n) + 1;
    const src = ((dst + (next() % (n - 1))) % n) + 1;
    return [dst, src] as [number, number];
  });
}

/** 64-byte Ethernet frames to the router's MAC carrying IPv4 to 10.(i>>8).(i&255).1, i over `prefixes`. */
export function routedFrames(count: number, prefixes: number): InputBatch[] {
  const pairs = randomPairs(count, prefixes, 3);
  return frames(pairs, [0]).map((b, k) => {
    for (let i = 0; i < b.count; i++) {
      const f = b.data.subarray(i * FRAME_LEN, (i + 1) * FRAME_LEN);
      f.set([0x02, 0, 0, 0, 0x0a, 0xfe], 0);
      const ip = f.subarray(14);
      const route = (pairs[k * BATCH + i]?.[0] ?? 1) - 1;
      ip.set([
        0x45,
        0,
        0,
        FRAME_LEN - 14,
        0,
        0,
        0,
        0,
        64,
        17,
        0,
        0,
        10,
        0,
        1,
        1,
        10,
        (route >>> 8) & 0xff,
        route & 0xff,
        1,
      ]);
      let sum = 0;
      for (let j = 0; j < 20; j += 2) sum += ((ip[j] ?? 0) << 8) | (ip[j + 1] ?? 0);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      ip[10] = (~sum >>> 8) & 0xff;
      ip[11] = ~sum & 0xff;
    }
    return b;
  });
}
