// The classic pcap file: a 24-byte file header, then records of a 16-byte header plus data.
// Every field is in the byte order the magic number shows (the writer's host order).
//
//   file header                          record header
//   +0  magic        u32                 +0  ts seconds        u32
//   +4  version major u16                +4  ts µs or ns       u32
//   +6  version minor u16                +8  captured length   u32
//   +8  thiszone     i32 (always 0)      +12 original length   u32
//   +12 sigfigs      u32 (always 0)      +16 data (captured length bytes)
//   +16 snaplen      u32
//   +20 link type    u32 (low 16 bits LINKTYPE_*, FCS bits above)

export const F_MAGIC = 0;
export const F_VERSION_MAJOR = F_MAGIC + 4;
export const F_VERSION_MINOR = F_VERSION_MAJOR + 2;
export const F_THIS_ZONE = F_VERSION_MINOR + 2;
export const F_SIG_FIGS = F_THIS_ZONE + 4;
export const F_SNAP_LEN = F_SIG_FIGS + 4;
export const F_LINK_TYPE = F_SNAP_LEN + 4;
export const FILE_HEADER_LEN = F_LINK_TYPE + 4;

export const R_TS_SEC = 0;
export const R_TS_FRAC = R_TS_SEC + 4;
export const R_CAP_LEN = R_TS_FRAC + 4;
export const R_ORIG_LEN = R_CAP_LEN + 4;
export const RECORD_HEADER_LEN = R_ORIG_LEN + 4;

/** Microsecond timestamps; read in the writer's byte order. */
export const MAGIC_MICRO = 0xa1b2c3d4;
/** Nanosecond timestamps. */
export const MAGIC_NANO = 0xa1b23c4d;
export const MAGIC_MICRO_SWAPPED = 0xd4c3b2a1;
export const MAGIC_NANO_SWAPPED = 0x4d3cb2a1;

export const VERSION_MAJOR = 2;
export const VERSION_MINOR = 4;

// The link-type field (libpcap pcap-common.h, draft-ietf-opsawg-pcap §4).
export const LT_LINKTYPE_MASK = 0x0000ffff;
export const LT_FCS_LENGTH_PRESENT = 0x04000000;
const LT_FCS_LENGTH_SHIFT = 28;

/** LINKTYPE_* from the link-type field. */
export function ltLinkType(field: number): number {
  return field & LT_LINKTYPE_MASK;
}

/** Bytes of FCS the link-type field announces (it counts 16-bit words), else 0. */
export function ltFcsLen(field: number): number {
  if ((field & LT_FCS_LENGTH_PRESENT) === 0) return 0;
  return ((field >>> LT_FCS_LENGTH_SHIFT) & 0xf) * 2;
}

/** The link-type field for a LINKTYPE_* and an FCS length in bytes (even, ≤ 30). */
export function ltField(linkType: number, fcsLen: number): number {
  if (fcsLen === 0) return linkType & LT_LINKTYPE_MASK;
  if (fcsLen % 2 !== 0 || fcsLen > 30)
    throw new RangeError(`FCS length ${fcsLen} is not an even number of bytes up to 30`);
  return ((linkType & LT_LINKTYPE_MASK) | LT_FCS_LENGTH_PRESENT | ((fcsLen / 2) << LT_FCS_LENGTH_SHIFT)) >>> 0;
}
