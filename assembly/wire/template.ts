// Header templates: a send row's header made once, when the row is installed
// (tables/write.ts), so that a push (pipeline/effects.ts) copies it in front of
// the packet and patches only what depends on the packet — the length fields,
// and an IPv4 header's checksum, updated incrementally (RFC 1624).
//
//   ┌──────────────────────────────────────┬───────────┬─────────┬──────────┬───────────┬──────────┬─────┐
//   │ block[48]: the header, right-aligned │ design u8 │ hlen u8 │ lenAt u8 │ len2At u8 │ sumAt u8 │ pad │
//   ├──────────────┬───────────────┬───────┴─┬─────────┴─────────┴──────────┴───────────┴──────────┴─────┤
//   │ lenBase u16  │ len2Base u16  │ pad (2) │ sum u32 (~HC + ~lenBase)  │ maxPayload u32                 │
//   └──────────────┴───────────────┴─────────┴───────────────────────────┴────────────────────────────────┘
//
// The block holds the header as emit writes it for an empty payload, ending at
// byte 48: a push stores the whole block so that it ends where the packet
// starts (three 16-byte moves, whatever the header's length), when the slot
// has 48 bytes of room in front. The length fields (lenAt, len2At: offsets in
// the header, 0 = none) hold their value for an empty payload (lenBase,
// len2Base): a push adds the payload's length. sumAt is the IPv4 checksum's
// offset (0 = none): HC' = ~(~HC + ~m + m') with m the total length for an
// empty payload and m' the packet's; ~HC + ~m is kept, so a push adds m' and
// folds. `design` is the design the template was made for (NONE: no template,
// emit instead).

import { getU16, setU16 } from "./bytes";
import { emit, emitLen, maxPayload } from "./design";
import * as ipv4 from "./ipv4";
import * as ipv6 from "./ipv6";
import * as udp from "./udp";
import { DESIGN_GRE, DESIGN_IPV4, DESIGN_IPV6, DESIGN_VXLAN, KEY_MAX_LEN } from "../abi";

export const BLOCK: i32 = 48;
export namespace field {
  export const DESIGN: i32 = BLOCK;
  export const HLEN: i32 = DESIGN + 1;
  export const LEN_AT: i32 = HLEN + 1;
  export const LEN2_AT: i32 = LEN_AT + 1;
  export const SUM_AT: i32 = LEN2_AT + 1;
  export const LEN_BASE: i32 = SUM_AT + 2; // a byte of padding: on a u16
  export const LEN2_BASE: i32 = LEN_BASE + 2;
  export const SUM: i32 = LEN2_BASE + 4; // two bytes of padding: on a u32
  export const MAX_PAYLOAD: i32 = SUM + 4;
}
export const TEMPLATE_LEN: i32 = field.MAX_PAYLOAD + 4;
/** Where a send row's template sits in its data, after the header's fields (a key vector, at most KEY_MAX_LEN). */
export const TEMPLATE_AT: i32 = (KEY_MAX_LEN + 15) & ~15;
/** `design` of a row with no template. */
export const NONE: u32 = 0xff;

/** The template of a send row whose data (the header's fields) is at `fields`. */
@inline export function templateOf(fields: usize): usize {
  return fields + <usize>TEMPLATE_AT;
}

/** Where the design's length fields and IPv4 checksum are, as lenAt, len2At and sumAt (0 = none). */
function patches(design: i32, tp: usize): void {
  let lenAt = 0;
  let len2At = 0;
  let sumAt = 0;
  if (design == DESIGN_IPV4 || design == DESIGN_GRE || design == DESIGN_VXLAN) {
    lenAt = ipv4.field.TOTAL_LEN;
    sumAt = ipv4.field.CHECKSUM;
  }
  if (design == DESIGN_VXLAN) len2At = ipv4.HEADER_LEN + udp.field.LENGTH;
  if (design == DESIGN_IPV6) lenAt = ipv6.field.PAYLOAD_LEN;
  store<u8>(tp + field.LEN_AT, <u8>lenAt);
  store<u8>(tp + field.LEN2_AT, <u8>len2At);
  store<u8>(tp + field.SUM_AT, <u8>sumAt);
}

/**
 * Makes the template at `tp` (TEMPLATE_LEN bytes) of the header of `design`
 * with fields `fields`. A header longer than the block gets none (NONE).
 */
export function makeTemplate(design: i32, fields: usize, tp: usize): void {
  memory.fill(tp, 0, <usize>TEMPLATE_LEN);
  store<u8>(tp + field.DESIGN, <u8>NONE);
  const hlen = emitLen(design, fields);
  if (hlen <= 0 || hlen > BLOCK || <u32>design >= NONE) return;
  const h = tp + <usize>(BLOCK - hlen);
  emit(design, h, fields, 0);
  patches(design, tp);
  store<u8>(tp + field.HLEN, <u8>hlen);
  const lenAt = <usize>load<u8>(tp + field.LEN_AT);
  const len2At = <usize>load<u8>(tp + field.LEN2_AT);
  const sumAt = <usize>load<u8>(tp + field.SUM_AT);
  const lenBase = lenAt != 0 ? getU16(h + lenAt) : 0;
  store<u16>(tp + field.LEN_BASE, <u16>lenBase);
  store<u16>(tp + field.LEN2_BASE, <u16>(len2At != 0 ? getU16(h + len2At) : 0));
  if (sumAt != 0) store<u32>(tp + field.SUM, (~getU16(h + sumAt) & 0xffff) + (~lenBase & 0xffff));
  store<u32>(tp + field.MAX_PAYLOAD, <u32>maxPayload(design, hlen));
  store<u8>(tp + field.DESIGN, <u8>design);
}

/** Whether `tp` is a template of `design`'s header. */
@inline export function madeFor(tp: usize, design: i32): bool {
  return <i32>load<u8>(tp + field.DESIGN) == design;
}

/** The header's length. */
@inline export function headerLen(tp: usize): i32 {
  return <i32>load<u8>(tp + field.HLEN);
}

/** The longest payload the header can state. */
@inline export function maxPayloadOf(tp: usize): i32 {
  return <i32>load<u32>(tp + field.MAX_PAYLOAD);
}

/**
 * Copies the `hlen` header bytes at `from` (in a template's block: at least 48 bytes readable before its end) to
 * `p`, writing no byte outside [p, p + hlen): overlapping moves of 16 or 8 bytes, which an engine keeps inline where
 * memory.copy may be a call.
 */
@inline function writeExactly(p: usize, from: usize, hlen: usize): void {
  if (hlen >= 16) {
    v128.store(p, v128.load(from));
    if (hlen > 32) v128.store(p, v128.load(from, 16), 16);
    v128.store(p + hlen - 16, v128.load(from + hlen - 16));
  } else if (hlen >= 8) {
    store<u64>(p, load<u64>(from));
    store<u64>(p + hlen - 8, load<u64>(from + hlen - 8));
  } else {
    for (let i: usize = 0; i < hlen; i++) store<u8>(p + i, load<u8>(from + i));
  }
}

/**
 * Writes the header of template `tp` at `p`, in front of `payloadLen` bytes
 * (at most maxPayloadOf). With `block`, `p + hlen` has 48 bytes in front of it
 * that may be written (the whole block is stored); else exactly hlen bytes are.
 */
@inline export function writeTemplate(tp: usize, p: usize, payloadLen: u32, block: bool): void {
  const hlen = <usize>load<u8>(tp + field.HLEN);
  if (block) {
    const to = p + hlen - <usize>BLOCK;
    v128.store(to, v128.load(tp));
    v128.store(to, v128.load(tp, 16), 16);
    v128.store(to, v128.load(tp, 32), 32);
  } else {
    writeExactly(p, tp + <usize>BLOCK - hlen, hlen);
  }
  const lenAt = <usize>load<u8>(tp + field.LEN_AT);
  if (lenAt == 0) return;
  const total = <u32>load<u16>(tp + field.LEN_BASE) + payloadLen;
  setU16(p + lenAt, total);
  const len2At = <usize>load<u8>(tp + field.LEN2_AT);
  if (len2At != 0) setU16(p + len2At, <u32>load<u16>(tp + field.LEN2_BASE) + payloadLen);
  const sumAt = <usize>load<u8>(tp + field.SUM_AT);
  if (sumAt != 0) {
    // At most 0x1fffe + 0xffff: two end-around carries fold it to 16 bits.
    let sum = load<u32>(tp + field.SUM) + total;
    sum = (sum & 0xffff) + (sum >>> 16);
    sum = (sum & 0xffff) + (sum >>> 16);
    setU16(p + sumAt, ~sum & 0xffff);
  }
}
