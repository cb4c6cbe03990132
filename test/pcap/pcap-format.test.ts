// Classic pcap rules, one row per rule, on files built byte by byte.

import { describe, expect, it } from "vitest";
import { LINKTYPE, linkTypeByName, linkTypeName, maxCapLen } from "../../src/pcap/link-types.js";
import { ltFcsLen, ltField, ltLinkType } from "../../src/pcap/pcap-layout.js";
import { type PcapHeaderSpec, type PcapRecordSpec, hex, payload, pcapFile, readBytes } from "./builders.js";

interface Case {
  name: string;
  header: PcapHeaderSpec;
  records: PcapRecordSpec[];
  want: { capLen: number; origLen: number; tsNs: string }[];
  iface?: Partial<{ linkType: number; linkTypeName: string; snapLen: number; fcsLen: number; tsUnitsPerSec: number }>;
}

const SEC = 1_700_000_000;

const CASES: Case[] = [
  {
    name: "little-endian µs",
    header: { le: true },
    records: [{ sec: SEC, frac: 123_456 }],
    want: [{ capLen: 60, origLen: 60, tsNs: "1700000000123456000" }],
    iface: { tsUnitsPerSec: 1e6 },
  },
  {
    name: "big-endian µs",
    header: { le: false },
    records: [{ sec: SEC, frac: 999_999 }],
    want: [{ capLen: 60, origLen: 60, tsNs: "1700000000999999000" }],
  },
  {
    name: "little-endian ns",
    header: { le: true, nano: true },
    records: [{ sec: SEC, frac: 123_456_789 }],
    want: [{ capLen: 60, origLen: 60, tsNs: "1700000000123456789" }],
    iface: { tsUnitsPerSec: 1e9 },
  },
  {
    name: "big-endian ns",
    header: { le: false, nano: true },
    records: [{ sec: 0xffffffff, frac: 999_999_999 }],
    want: [{ capLen: 60, origLen: 60, tsNs: "4294967295999999999" }],
  },
  {
    name: "caplen below origlen (cut by the snaplen)",
    header: { snapLen: 64 },
    records: [{ data: payload(64), origLen: 1514 }],
    want: [{ capLen: 64, origLen: 1514, tsNs: "1700000000000000000" }],
    iface: { snapLen: 64 },
  },
  {
    // libpcap and Wireshark read these too: the snaplen is advice, the record is the truth.
    name: "caplen above the snaplen is read as it is",
    header: { snapLen: 32 },
    records: [{ data: payload(100) }],
    want: [{ capLen: 100, origLen: 100, tsNs: "1700000000000000000" }],
  },
  {
    name: "a µs fraction of a second or more carries into the seconds",
    header: {},
    records: [{ sec: SEC, frac: 2_500_000 }],
    want: [{ capLen: 60, origLen: 60, tsNs: "1700000002500000000" }],
  },
  {
    name: "zero-length packets",
    header: {},
    records: [
      { data: payload(0), origLen: 0 },
      { data: payload(0), origLen: 10 },
    ],
    want: [
      { capLen: 0, origLen: 0, tsNs: "1700000000000000000" },
      { capLen: 0, origLen: 10, tsNs: "1700000000000000000" },
    ],
  },
  {
    name: "no packets",
    header: {},
    records: [],
    want: [],
  },
  {
    name: "FCS bits: 4 bytes (2 words) on Ethernet",
    header: { linkTypeField: 0x24000001 },
    records: [{}],
    want: [{ capLen: 60, origLen: 60, tsNs: "1700000000000000000" }],
    iface: { linkType: 1, linkTypeName: "ETHERNET", fcsLen: 4 },
  },
  {
    name: "FCS length bits without the present bit mean no FCS",
    header: { linkTypeField: 0x20000001 },
    records: [],
    want: [],
    iface: { linkType: 1, fcsLen: 0 },
  },
  {
    name: "raw IP",
    header: { linkTypeField: LINKTYPE.RAW },
    records: [],
    want: [],
    iface: { linkType: 101, linkTypeName: "RAW" },
  },
  {
    name: "D-Bus may carry messages over 256 KiB",
    header: { linkTypeField: LINKTYPE.DBUS },
    records: [{ data: payload(300_000) }],
    want: [{ capLen: 300_000, origLen: 300_000, tsNs: "1700000000000000000" }],
    iface: { linkTypeName: "DBUS" },
  },
];

describe("pcap reader", () => {
  it.each(CASES)("$name", ({ header, records, want, iface }) => {
    const bytes = pcapFile(header, records);
    for (const options of [{}, { chunkSize: 16, batchSize: 2 }]) {
      const { packets, error, reader } = readBytes(bytes, options);
      expect(error).toBeUndefined();
      expect(packets.map(({ capLen, origLen, tsNs }) => ({ capLen, origLen, tsNs }))).toEqual(want);
      expect(packets.map((p) => p.iface)).toEqual(want.map(() => 0));
      expect(packets.map((p) => p.hex)).toEqual(records.map((r) => hex(r.data ?? payload(60))));
      expect(reader?.format).toBe("pcap");
      expect(reader?.interfaces).toHaveLength(1);
      expect(reader?.interfaces[0]).toMatchObject({ index: 0, section: 0, tsOffsetSec: 0, ...iface });
      expect(reader?.bytesRead).toBe(bytes.length);
    }
  });

  it("reports the file header", () => {
    const { reader } = readBytes(pcapFile({ le: false, nano: true, snapLen: 1500, linkTypeField: 0x24000001 }, []));
    expect(reader?.pcapHeader).toEqual({
      bigEndian: true,
      nanosecond: true,
      versionMajor: 2,
      versionMinor: 4,
      thisZone: 0,
      sigFigs: 0,
      snapLen: 1500,
      linkTypeField: 0x24000001,
    });
  });
});

describe("link-type field", () => {
  it.each([
    { field: 1, linkType: 1, fcsLen: 0 },
    { field: 0x24000001, linkType: 1, fcsLen: 4 },
    { field: 0x14000069, linkType: 105, fcsLen: 2 },
    { field: 0xf4000001, linkType: 1, fcsLen: 30 },
  ])("field $field is link type $linkType with $fcsLen FCS bytes", ({ field, linkType, fcsLen }) => {
    expect([ltLinkType(field), ltFcsLen(field)]).toEqual([linkType, fcsLen]);
    expect(ltField(linkType, fcsLen)).toBe(field >>> 0);
  });

  it("refuses an odd FCS length", () => {
    expect(() => ltField(1, 3)).toThrow(RangeError);
  });
});

describe("link-type names", () => {
  it.each([
    [0, "NULL"],
    [1, "ETHERNET"],
    [9, "PPP"],
    [12, "RAW"],
    [14, "RAW"],
    [101, "RAW"],
    [105, "IEEE802_11"],
    [108, "LOOP"],
    [113, "LINUX_SLL"],
    [127, "IEEE802_11_RADIOTAP"],
    [147, "USER0"],
    [162, "USER15"],
    [228, "IPV4"],
    [229, "IPV6"],
    [240, "NETANALYZER"],
    [276, "LINUX_SLL2"],
    [65000, "LINKTYPE_65000"],
  ])("%i is %s", (value, name) => {
    expect(linkTypeName(value)).toBe(name);
  });

  it("looks names up both ways", () => {
    expect(linkTypeByName("ethernet")).toBe(1);
    expect(linkTypeByName("LINKTYPE_LINUX_SLL2")).toBe(276);
    expect(linkTypeByName("147")).toBe(147);
    expect(linkTypeByName("nope")).toBeUndefined();
  });

  it("allows libpcap's larger captured lengths only where libpcap does", () => {
    expect([maxCapLen(1), maxCapLen(LINKTYPE.DBUS), maxCapLen(LINKTYPE.USBPCAP), maxCapLen(LINKTYPE.EBHSCR)]).toEqual([
      262_144,
      128 * 1024 * 1024,
      1024 * 1024,
      8 * 1024 * 1024,
    ]);
  });
});
