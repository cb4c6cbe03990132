// Damaged files: every good packet first, then one PcapError naming the kind, the byte
// offset and what is wrong. Never a silent stop.

import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { PcapError, type PcapErrorKind } from "../../src/pcap/errors.js";
import {
  block,
  concat,
  epb,
  idb,
  payload,
  pcapFile,
  pcapHeader,
  pcapRecord,
  readBytes,
  shb,
  spb,
  u8,
} from "./builders.js";

interface Case {
  name: string;
  bytes: Uint8Array;
  good: number;
  kind: PcapErrorKind;
  offset: number;
  says: string;
}

const REC = 16 + 60; // one default pcap record
const SHB = 28;
const IDB = 20;
const EPB = 32 + 60;

const PCAP: Case[] = [
  {
    name: "empty file",
    bytes: new Uint8Array(0),
    good: 0,
    kind: "truncated-file-header",
    offset: 0,
    says: "the file is empty",
  },
  {
    name: "three bytes",
    bytes: Uint8Array.of(0xd4, 0xc3, 0xb2),
    good: 0,
    kind: "truncated-file-header",
    offset: 0,
    says: "only 3 bytes",
  },
  {
    name: "not a capture",
    bytes: new TextEncoder().encode("GIF89a........................"),
    good: 0,
    kind: "bad-magic",
    offset: 0,
    says: "not a pcap or pcapng file: it starts with 47 49 46 38 (expected pcap magic a1 b2 c3 d4 or a1 b2 3c 4d",
  },
  {
    name: "a gzip-compressed capture",
    bytes: Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0),
    good: 0,
    kind: "bad-magic",
    offset: 0,
    says: "(gzip: decompress it first)",
  },
  {
    name: "truncated file header",
    bytes: pcapHeader().subarray(0, 10),
    good: 0,
    kind: "truncated-file-header",
    offset: 0,
    says: "the file ends inside the pcap file header: 10 of 24 bytes",
  },
  {
    name: "unknown version",
    bytes: pcapHeader({ versionMajor: 3 }),
    good: 0,
    kind: "unsupported-version",
    offset: 4,
    says: "pcap version 3.4 is not one we read",
  },
  {
    name: "truncated record header",
    bytes: concat(pcapFile({}, [{}, {}]), pcapRecord({}).subarray(0, 7)),
    good: 2,
    kind: "truncated-record-header",
    offset: 24 + 2 * REC,
    says: "the file ends inside a record header: 7 of 16 bytes",
  },
  {
    name: "truncated record data",
    bytes: concat(pcapFile({ le: false }, [{}]), pcapRecord({ data: payload(74) }, false).subarray(0, 16 + 12)),
    good: 1,
    kind: "truncated-record-data",
    offset: 24 + REC,
    says: "record says caplen 74 but only 12 bytes remain",
  },
  {
    name: "absurd caplen",
    bytes: pcapFile({}, [{}, { capLen: 300_000 }]),
    good: 1,
    kind: "caplen-too-large",
    offset: 24 + REC,
    says: "record says caplen 300000, more than the 262144 bytes link type ETHERNET allows",
  },
  {
    // Read as far as the file goes, without first allocating what the header claims.
    name: "a huge caplen the link type allows, in a short file",
    bytes: pcapFile({ linkTypeField: 231 }, [{}, { capLen: 100_000_000 }]),
    good: 1,
    kind: "truncated-record-data",
    offset: 24 + REC,
    says: "record says caplen 100000000 but only 60 bytes remain",
  },
];

const PCAPNG: Case[] = [
  {
    name: "truncated SHB",
    bytes: shb().subarray(0, 20),
    good: 0,
    kind: "truncated-file-header",
    offset: 0,
    says: "the file ends inside the first section header block",
  },
  {
    name: "SHB with an unknown byte-order magic",
    bytes: shb({ bom: 0x11223344 }),
    good: 0,
    kind: "bad-byte-order-magic",
    offset: 8,
    says: "byte-order magic 0x11223344, expected 0x1a2b3c4d",
  },
  {
    name: "SHB of version 2",
    bytes: shb({ major: 2 }),
    good: 0,
    kind: "unsupported-version",
    offset: 12,
    says: "pcapng section version 2.0",
  },
  {
    name: "block length not a multiple of 4",
    bytes: concat(shb(), idb(), epb(), epb({ len: EPB + 1 })),
    good: 1,
    kind: "bad-block-length",
    offset: SHB + IDB + EPB,
    says: "EPB total length 93 is not a multiple of 4",
  },
  {
    name: "block length below the minimum for its type",
    bytes: concat(shb(), idb(), epb(), epb({ len: 24 })),
    good: 1,
    kind: "bad-block-length",
    offset: SHB + IDB + EPB,
    says: "EPB total length 24 is below the 32-byte minimum for its type",
  },
  {
    name: "absurd block length",
    bytes: concat(shb(), idb(), epb(), block(0x1234, payload(4), { len: 0xfffffff0 })),
    good: 1,
    kind: "bad-block-length",
    offset: SHB + IDB + EPB,
    says: "total length 4294967280 is more than",
  },
  {
    name: "trailing length differs from the leading one",
    bytes: concat(shb(), idb(), epb(), epb({ trailingLen: 96 })),
    good: 1,
    kind: "block-length-mismatch",
    offset: SHB + IDB + EPB,
    says: "EPB total length 92 at its start but 96 at its end",
  },
  {
    name: "truncated block header",
    bytes: concat(shb(), idb(), epb(), epb().subarray(0, 8)),
    good: 1,
    kind: "truncated-record-header",
    offset: SHB + IDB + EPB,
    says: "the file ends inside a block header: 8 of 12 bytes",
  },
  {
    name: "truncated block",
    bytes: concat(shb(), idb(), epb(), epb().subarray(0, 40)),
    good: 1,
    kind: "truncated-record-data",
    offset: SHB + IDB + EPB,
    says: "EPB says total length 92 but only 40 bytes remain",
  },
  {
    name: "EPB names an undeclared interface",
    bytes: concat(shb(), idb(), epb(), epb({ iface: 1 })),
    good: 1,
    kind: "undeclared-interface",
    offset: SHB + IDB + EPB,
    says: "EPB names interface 1, but section 0 declares interfaces 0 to 0",
  },
  {
    name: "interfaces do not carry over into the next section",
    bytes: concat(shb(), idb(), epb(), shb(), epb()),
    good: 1,
    kind: "undeclared-interface",
    offset: SHB + IDB + EPB + SHB,
    says: "EPB names interface 0, but section 1 declares no interface",
  },
  {
    name: "SPB before any IDB",
    bytes: concat(shb(), spb()),
    good: 0,
    kind: "undeclared-interface",
    offset: SHB,
    says: "SPB names interface 0, but section 0 declares no interface",
  },
  {
    name: "EPB caplen beyond its block",
    bytes: concat(shb(), idb(), epb(), epb({ capLen: 61 })),
    good: 1,
    kind: "caplen-too-large",
    offset: SHB + IDB + EPB,
    says: "EPB says caplen 61 but its block holds only 60 bytes of data",
  },
  {
    name: "EPB caplen beyond what the link type allows",
    bytes: concat(shb(), idb(), epb(), epb({ data: payload(262_148) })),
    good: 1,
    kind: "caplen-too-large",
    offset: SHB + IDB + EPB,
    says: "EPB says caplen 262148, more than the 262144 bytes link type ETHERNET allows",
  },
  {
    name: "a later SHB with a bad byte-order magic",
    bytes: concat(shb(), idb(), epb(), epb(), shb({ bom: 0 })),
    good: 2,
    kind: "bad-byte-order-magic",
    offset: SHB + IDB + 2 * EPB + 8,
    says: "byte-order magic 0x00000000",
  },
  {
    name: "IDB option running past its block",
    bytes: concat(shb(), idb(), epb(), block(1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 200, 0))),
    good: 1,
    kind: "bad-option",
    offset: SHB + IDB + EPB + 16,
    says: "option 9 of length 200 runs past the end of its IDB",
  },
  {
    name: "if_tsresol of the wrong length",
    bytes: concat(shb(), idb({ opts: [[9, Uint8Array.of(6, 6)]] })),
    good: 0,
    kind: "bad-option",
    offset: SHB + 16,
    says: "IDB option 9 has length 2, expected 1",
  },
  {
    name: "if_fcslen of the wrong length",
    bytes: concat(shb(), idb({ opts: [[13, u8(4)]] }), epb(), idb({ opts: [[13, Uint8Array.of(0, 0, 0, 4)]] })),
    good: 1,
    kind: "bad-option",
    offset: SHB + 32 + EPB + 16,
    says: "IDB option 13 has length 4, expected 1",
  },
];

describe.each([
  { format: "pcap", cases: PCAP },
  { format: "pcapng", cases: PCAPNG },
])("damaged $format", ({ cases }) => {
  describe.each([
    { shape: "default chunks", options: {} },
    { shape: "16-byte chunks, batches of 2", options: { chunkSize: 16, batchSize: 2 } },
  ])("$shape", ({ options }) => {
    it.each(cases)("$name", ({ bytes, good, kind, offset, says }) => {
      const { packets, error } = readBytes(bytes, options, "bad.cap");
      expect(packets).toHaveLength(good);
      expect(packets.map((p) => p.index)).toEqual([...Array(good).keys()]);
      expect(error).toBeInstanceOf(PcapError);
      expect(error).toBeInstanceOf(InputError);
      const e = error as PcapError;
      expect({ kind: e.kind, offset: e.offset }).toEqual({ kind, offset });
      expect(e.message).toContain(says);
      expect(e.message.startsWith(`bad.cap: byte ${offset}: `)).toBe(true);
      expect(e.message).not.toContain("\n");
    });
  });
});
