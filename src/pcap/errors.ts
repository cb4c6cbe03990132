// Damage in a capture file: an InputError that also says where (byte offset) and what kind.

import { InputError } from "../errors.js";

export type PcapErrorKind =
  /** Cannot open or read the file at all. */
  | "unreadable"
  /** The first bytes are neither a pcap nor a pcapng magic. */
  | "bad-magic"
  /** The file ends inside the pcap file header or the first SHB. */
  | "truncated-file-header"
  /** A pcap file or pcapng section of a version we do not read. */
  | "unsupported-version"
  /** A pcapng SHB whose byte-order magic is neither 0x1A2B3C4D nor its swap. */
  | "bad-byte-order-magic"
  /** The file ends inside a pcap record header or a pcapng block header. */
  | "truncated-record-header"
  /** The file ends inside a pcap record's data or a pcapng block's body. */
  | "truncated-record-data"
  /** A pcapng block length below the minimum for its type, not a multiple of 4, or absurd. */
  | "bad-block-length"
  /** A pcapng block's trailing total length differs from its leading one. */
  | "block-length-mismatch"
  /** A record's captured length is more than its link type allows or its block holds. */
  | "caplen-too-large"
  /** A pcapng packet block names an interface not declared in its section. */
  | "undeclared-interface"
  /** A pcapng option runs past the end of its block, or has the wrong size for its code. */
  | "bad-option";

export class PcapError extends InputError {
  /** Byte offset in the file where the damaged structure starts. */
  readonly offset: number;
  readonly kind: PcapErrorKind;

  constructor(file: string, offset: number, kind: PcapErrorKind, problem: string, fix = "") {
    super(file, `byte ${offset}`, problem, fix);
    this.name = "PcapError";
    this.offset = offset;
    this.kind = kind;
  }
}

/** The file ends inside a record or block header: `have` of `need` bytes. */
export function truncatedHeader(file: string, offset: number, what: string, have: number, need: number): PcapError {
  return new PcapError(
    file,
    offset,
    "truncated-record-header",
    `the file ends inside a ${what}: ${have} of ${need} bytes`,
    "the capture was cut short",
  );
}

/** A captured length above libpcap's limit for the link type (see maxCapLen). */
export function capLenOverLimit(
  file: string,
  offset: number,
  what: string,
  limit: number,
  linkTypeName: string,
): PcapError {
  return new PcapError(
    file,
    offset,
    "caplen-too-large",
    `${what}, more than the ${limit} bytes link type ${linkTypeName} allows`,
    "libpcap and Wireshark reject it too; the capture is damaged here",
  );
}
