// pcapng blocks (draft-ietf-opsawg-pcapng). Every block is
//
//   +0  block type          u32
//   +4  block total length  u32   (multiple of 4, counts header, body and trailer)
//   +8  body …                    (options: code u16, length u16, value padded to 4)
//   end-4 block total length u32  (repeated)
//
// in the byte order of its section, which the SHB's byte-order magic shows.

export const B_TYPE = 0;
export const B_TOTAL_LEN = B_TYPE + 4;
export const B_BODY = B_TOTAL_LEN + 4;
export const BLOCK_TRAILER_LEN = 4;
/** An empty block: header and trailer. */
export const BLOCK_MIN_LEN = B_BODY + BLOCK_TRAILER_LEN;

export const BT_SHB = 0x0a0d0d0a;
export const BT_IDB = 0x00000001;
export const BT_PB = 0x00000002;
export const BT_SPB = 0x00000003;
export const BT_NRB = 0x00000004;
export const BT_ISB = 0x00000005;
export const BT_EPB = 0x00000006;
export const BT_DSB = 0x0000000a;
export const BT_CB_COPY = 0x00000bad;
export const BT_CB_NOCOPY = 0x40000bad;

export const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
export const BYTE_ORDER_MAGIC_SWAPPED = 0x4d3c2b1a;
export const PCAPNG_VERSION_MAJOR = 1;
export const PCAPNG_VERSION_MINOR = 0;

// Section Header Block.
export const SHB_BYTE_ORDER = B_BODY;
export const SHB_VERSION_MAJOR = SHB_BYTE_ORDER + 4;
export const SHB_VERSION_MINOR = SHB_VERSION_MAJOR + 2;
export const SHB_SECTION_LEN = SHB_VERSION_MINOR + 2;
export const SHB_OPTIONS = SHB_SECTION_LEN + 8;
export const SHB_MIN_LEN = SHB_OPTIONS + BLOCK_TRAILER_LEN;

// Interface Description Block.
export const IDB_LINK_TYPE = B_BODY;
export const IDB_RESERVED = IDB_LINK_TYPE + 2;
export const IDB_SNAP_LEN = IDB_RESERVED + 2;
export const IDB_OPTIONS = IDB_SNAP_LEN + 4;
export const IDB_MIN_LEN = IDB_OPTIONS + BLOCK_TRAILER_LEN;

// Enhanced Packet Block.
export const EPB_IFACE = B_BODY;
export const EPB_TS_HI = EPB_IFACE + 4;
export const EPB_TS_LO = EPB_TS_HI + 4;
export const EPB_CAP_LEN = EPB_TS_LO + 4;
export const EPB_ORIG_LEN = EPB_CAP_LEN + 4;
export const EPB_DATA = EPB_ORIG_LEN + 4;
export const EPB_MIN_LEN = EPB_DATA + BLOCK_TRAILER_LEN;

// Obsolete Packet Block: the EPB's layout with its interface id split into a 16-bit id and a
// 16-bit drops count; every later field sits at the EPB's offset.
export const PB_IFACE = B_BODY;
export const PB_DROPS = PB_IFACE + 2;
export const PB_MIN_LEN = EPB_MIN_LEN;

// Simple Packet Block: no interface id (always the section's first), no timestamp, no caplen.
export const SPB_ORIG_LEN = B_BODY;
export const SPB_DATA = SPB_ORIG_LEN + 4;
export const SPB_MIN_LEN = SPB_DATA + BLOCK_TRAILER_LEN;

// Options.
export const OPT_CODE = 0;
export const OPT_LEN = OPT_CODE + 2;
export const OPT_VALUE = OPT_LEN + 2;
export const OPT_ENDOFOPT = 0;
export const IF_NAME = 2;
export const IF_TSRESOL = 9;
export const IF_FCSLEN = 13;
export const IF_TSOFFSET = 14;

/** Wireshark's ceiling: a block may hold the largest packet any link type allows plus options. */
export const BLOCK_MAX_LEN = 128 * 1024 * 1024 + 128 * 1024;

/** Bytes to add to n to reach a multiple of 4. */
export function pad4(n: number): number {
  return (4 - (n & 3)) & 3;
}

const BLOCK_NAMES = new Map<number, string>([
  [BT_SHB, "SHB"],
  [BT_IDB, "IDB"],
  [BT_PB, "PB"],
  [BT_SPB, "SPB"],
  [BT_NRB, "NRB"],
  [BT_ISB, "ISB"],
  [BT_EPB, "EPB"],
  [BT_DSB, "DSB"],
  [BT_CB_COPY, "custom block"],
  [BT_CB_NOCOPY, "custom block"],
]);

export function blockName(type: number): string {
  return BLOCK_NAMES.get(type) ?? `block type 0x${type.toString(16).padStart(8, "0")}`;
}

/** The smallest total length a block of this type may have. */
export function blockMinLen(type: number): number {
  switch (type) {
    case BT_SHB:
      return SHB_MIN_LEN;
    case BT_IDB:
      return IDB_MIN_LEN;
    case BT_EPB:
      return EPB_MIN_LEN;
    case BT_PB:
      return PB_MIN_LEN;
    case BT_SPB:
      return SPB_MIN_LEN;
    default:
      return BLOCK_MIN_LEN;
  }
}
