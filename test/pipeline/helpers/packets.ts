// Packet factories for pipeline tests: each builds a valid header from
// defaults and the fields a test overrides, in front of a payload. Broken
// headers are made from valid ones (truncate, rewrite a byte) by the caller.

import { concat } from "../../pcap/builders.js";
import { fixIpv4Checksum, TPID_CUSTOMER } from "../../../src/model/headers.js";

function put(b: Uint8Array, at: number, len: number, value: bigint | number): void {
  let v = BigInt(value);
  for (let i = len - 1; i >= 0; i--) {
    b[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

export interface Tag {
  readonly tpid?: number;
  readonly pcp?: number;
  readonly dei?: number;
  readonly vid: number;
}

export interface EthernetFields {
  readonly dst?: bigint;
  readonly src?: bigint;
  readonly tags?: readonly Tag[];
  readonly type?: number;
  readonly payload?: Uint8Array;
}

export function ethernetFrame(f: EthernetFields = {}): Uint8Array {
  const tags = f.tags ?? [];
  const h = new Uint8Array(14 + 4 * tags.length);
  put(h, 0, 6, f.dst ?? 0x020000000002n);
  put(h, 6, 6, f.src ?? 0x020000000001n);
  tags.forEach((t, i) => {
    put(h, 12 + 4 * i, 2, t.tpid ?? TPID_CUSTOMER);
    put(h, 14 + 4 * i, 2, ((t.pcp ?? 0) << 13) | ((t.dei ?? 0) << 12) | t.vid);
  });
  put(h, 12 + 4 * tags.length, 2, f.type ?? 0x0800);
  return concat(h, f.payload ?? new Uint8Array(0));
}

export interface Ipv4Fields {
  readonly dscp?: number;
  readonly ecn?: number;
  /** Bytes of options (a multiple of 4, at most 40). */
  readonly options?: Uint8Array;
  /** Default: header and payload. */
  readonly totalLen?: number;
  readonly ident?: number;
  readonly flags?: number;
  readonly fragOffset?: number;
  readonly ttl?: number;
  readonly proto?: number;
  readonly src?: bigint;
  readonly dst?: bigint;
  /** Transport ports, written as the payload's first 4 bytes. */
  readonly ports?: readonly [number, number];
  readonly payload?: Uint8Array;
}

export function ipv4Packet(f: Ipv4Fields = {}): Uint8Array {
  const options = f.options ?? new Uint8Array(0);
  const h = new Uint8Array(20 + options.length);
  const ports = f.ports === undefined ? new Uint8Array(0) : new Uint8Array(4);
  if (f.ports !== undefined) {
    put(ports, 0, 2, f.ports[0]);
    put(ports, 2, 2, f.ports[1]);
  }
  const payload = concat(ports, f.payload ?? new Uint8Array(0));
  h[0] = 0x40 | (h.length / 4);
  h[1] = ((f.dscp ?? 0) << 2) | (f.ecn ?? 0);
  put(h, 2, 2, f.totalLen ?? h.length + payload.length);
  put(h, 4, 2, f.ident ?? 0x1234);
  put(h, 6, 2, ((f.flags ?? 0) << 13) | (f.fragOffset ?? 0));
  h[8] = f.ttl ?? 64;
  h[9] = f.proto ?? 17;
  put(h, 12, 4, f.src ?? 0x0a000001n);
  put(h, 16, 4, f.dst ?? 0x0a000002n);
  h.set(options, 20);
  fixIpv4Checksum(h);
  return concat(h, payload);
}

export interface Ipv6Fields {
  readonly tc?: number;
  readonly flow?: number;
  /** Default: the payload's length. */
  readonly payloadLen?: number;
  readonly next?: number;
  readonly hlim?: number;
  readonly src?: bigint;
  readonly dst?: bigint;
  readonly payload?: Uint8Array;
}

export function ipv6Packet(f: Ipv6Fields = {}): Uint8Array {
  const payload = f.payload ?? new Uint8Array(0);
  const h = new Uint8Array(40);
  put(h, 0, 4, (6n << 28n) | (BigInt(f.tc ?? 0) << 20n) | BigInt(f.flow ?? 0));
  put(h, 4, 2, f.payloadLen ?? payload.length);
  h[6] = f.next ?? 17;
  h[7] = f.hlim ?? 64;
  put(h, 8, 16, f.src ?? 0x20010db8000000000000000000000001n);
  put(h, 24, 16, f.dst ?? 0x20010db8000000000000000000000002n);
  return concat(h, payload);
}

export interface CnaFields {
  readonly src?: bigint;
  readonly dst?: bigint;
  readonly session?: bigint;
  readonly overlay?: bigint;
  readonly reserved?: number;
  readonly payload?: Uint8Array;
}

export function cnaPacket(f: CnaFields = {}): Uint8Array {
  const h = new Uint8Array(16);
  put(h, 0, 4, f.src ?? 1n);
  put(h, 4, 4, f.dst ?? 2n);
  put(h, 8, 4, f.session ?? 0n);
  put(h, 12, 2, f.overlay ?? 0n);
  put(h, 14, 2, f.reserved ?? 0);
  return concat(h, f.payload ?? new Uint8Array(0));
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
