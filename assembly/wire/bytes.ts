// Network byte order, in one place.
//
// Every multi-byte field on the wire is big-endian; wasm loads and stores are
// little-endian. These helpers are the only code that swaps. They do no bounds
// checks: a caller reads a header only after its parser has checked that the
// header's bytes lie inside the packet (see each file under wire/), and the rest
// of the data plane relies on that guarantee.

@inline export function getU8(p: usize): u32 {
  return <u32>load<u8>(p);
}

@inline export function getU16(p: usize): u32 {
  return <u32>bswap<u16>(load<u16>(p));
}

@inline export function getU32(p: usize): u32 {
  return bswap<u32>(load<u32>(p));
}

/** A 24-bit field (a VXLAN VNI, an MPLS label in its key slot) as the low bits of a u32. */
@inline export function getU24(p: usize): u32 {
  return (getU16(p) << 8) | getU8(p + 2);
}

/** A 48-bit field (a MAC address) as the low bits of a u64. */
@inline export function getU48(p: usize): u64 {
  return ((<u64>getU16(p)) << 32) | (<u64>getU32(p + 2));
}

@inline export function setU8(p: usize, v: u32): void {
  store<u8>(p, <u8>v);
}

@inline export function setU16(p: usize, v: u32): void {
  store<u16>(p, bswap<u16>(<u16>v));
}

@inline export function setU32(p: usize, v: u32): void {
  store<u32>(p, bswap<u32>(v));
}

@inline export function setU24(p: usize, v: u32): void {
  setU16(p, v >> 8);
  setU8(p + 2, v);
}

@inline export function setU48(p: usize, v: u64): void {
  setU16(p, <u32>(v >> 32));
  setU32(p + 2, <u32>v);
}
