// Which worker thread runs a packet (src/run/workers.ts): a hash of the
// packet's flow, so every packet of a flow goes to one worker and keeps its
// order there. A flow is what anycast keeps on one receiver: the design's flow
// fields (src/wire/designs.ts) and where the packet entered. The hash reads a
// part of those fields, the addresses, which every packet of a flow shares too:
// a coarser split is still one worker per flow.

import type { DesignDef } from "../wire/designs.js";

/** Bytes of each design's header that hold flow fields (addresses); a mask for bits that are not. */
export interface FlowBytes {
  readonly start: number;
  readonly end: number;
  /** For the byte at end − 1: the flow bits in it (an MPLS label ends mid-byte). */
  readonly lastMask?: number;
}

const FLOW_BYTES: Readonly<Record<string, FlowBytes>> = {
  ethernet: { start: 0, end: 12 }, // dst, src
  ipv4: { start: 12, end: 20 }, // src, dst
  gre: { start: 12, end: 20 }, // outer IPv4 src, dst
  vxlan: { start: 12, end: 20 }, // outer IPv4 src, dst
  ipv6: { start: 8, end: 40 }, // src, dst
  cna: { start: 0, end: 8 }, // src, dst
  mpls: { start: 0, end: 3, lastMask: 0xf0 }, // the label's 20 bits
};

/**
 * The bytes whose hash places packets entering at an endpoint of `design`;
 * undefined when the endpoint itself is the flow: a session endpoint
 * (`payload`: the packets are payload the send table wraps) or a design with
 * no addresses listed here.
 */
export function flowBytes(design: DesignDef, payload: boolean): FlowBytes | undefined {
  return payload ? undefined : FLOW_BYTES[design.name];
}

/** The flow hash of the packet data[at .. at+len) that entered at `endpoint`, whose flow bytes are `bytes`. */
export function flowHash(data: Uint8Array, at: number, len: number, endpoint: number, bytes: FlowBytes | undefined): number {
  let h = Math.imul(endpoint + 1, FNV_PRIME);
  if (bytes === undefined) return mix(h);
  const last = bytes.end - 1;
  const lastMask = bytes.lastMask ?? 0xff;
  const stop = Math.min(bytes.end, len);
  let k = bytes.start;
  // Four bytes a step (the last one masked when it is the flow's last byte), then byte by byte.
  for (; k + 4 <= stop; k += 4) {
    const p = at + k;
    let w = (data[p] as number) | ((data[p + 1] as number) << 8) | ((data[p + 2] as number) << 16) | ((data[p + 3] as number) << 24);
    if (k + 3 === last) w &= (lastMask << 24) | 0xffffff;
    h = Math.imul(h ^ w, FNV_PRIME);
    h = (h << 13) | (h >>> 19);
  }
  for (; k < stop; k++) {
    const b = (data[at + k] as number) & (k === last ? lastMask : 0xff);
    h = Math.imul(h ^ b, FNV_PRIME);
  }
  return mix(h);
}

const FNV_PRIME = 0x01000193;

/** MurmurHash3's finaliser: every input bit reaches the low bits that choose the worker. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash buckets per worker thread; the main thread's data plane takes one bucket in all (see planeOf()). */
const BUCKETS_PER_THREAD = 8;

/**
 * The data plane a flow hash runs on, of `planes`. The main thread's (0) takes
 * one bucket of BUCKETS_PER_THREAD × threads + 1, for it also merges and
 * writes; the worker threads (1 ..) share the others.
 */
export function planeOf(hash: number, planes: number): number {
  if (planes === 1) return 0;
  const threads = planes - 1;
  // The top 16 bits scaled to the bucket count: integer arithmetic (a % on a 32-bit unsigned hash is a float remainder).
  const bucket = ((hash >>> 16) * (BUCKETS_PER_THREAD * threads + 1)) >>> 16;
  return bucket === 0 ? 0 : 1 + ((bucket - 1) % threads);
}
