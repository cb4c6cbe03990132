// pcapng rules, one row per rule, on files built block by block.

import { describe, expect, it } from "vitest";
import { PACKET_NO_TIMESTAMP } from "../../src/pcap/types.js";
import { block, concat, epb, hex, idb, payload, pb, readBytes, shb, spb, text, u64, u8 } from "./builders.js";

const IF_NAME = 2;
const IF_DESCRIPTION = 3;
const IF_TSRESOL = 9;
const IF_FCSLEN = 13;
const IF_TSOFFSET = 14;

/** A u64 timestamp as the (hi, lo) pair an EPB holds. */
function ts(units: bigint): { tsHi: number; tsLo: number } {
  return { tsHi: Number(units >> 32n), tsLo: Number(units & 0xffffffffn) };
}

interface Want {
  iface: number;
  capLen: number;
  origLen: number;
  tsNs: string | null;
}

interface Case {
  name: string;
  blocks: Uint8Array[];
  want: Want[];
  interfaces?: object[];
  sections?: number;
}

const T = 1_700_000_000_123_456n; // µs

const CASES: Case[] = [
  {
    name: "one interface, default µs timestamps",
    blocks: [shb(), idb({ snapLen: 65535 }), epb(ts(T)), epb({ ...ts(T + 1n), data: payload(61), origLen: 1514 })],
    want: [
      { iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
      { iface: 0, capLen: 61, origLen: 1514, tsNs: "1700000000123457000" },
    ],
    interfaces: [
      {
        index: 0,
        section: 0,
        linkType: 1,
        linkTypeName: "ETHERNET",
        snapLen: 65535,
        fcsLen: 0,
        tsUnitsPerSec: 1e6,
        tsOffsetSec: 0,
      },
    ],
  },
  {
    name: "big-endian section",
    blocks: [shb({ le: false }), idb({ le: false, linkType: 101 }), epb({ le: false, ...ts(T) })],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" }],
    interfaces: [{ linkType: 101, linkTypeName: "RAW" }],
  },
  {
    name: "if_tsresol 10^-9",
    blocks: [shb(), idb({ opts: [[IF_TSRESOL, u8(9)]] }), epb(ts(1_700_000_000_123_456_789n))],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456789" }],
    interfaces: [{ tsUnitsPerSec: 1e9 }],
  },
  {
    name: "if_tsresol 10^-3",
    blocks: [shb(), idb({ opts: [[IF_TSRESOL, u8(3)]] }), epb(ts(1_700_000_000_123n))],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123000000" }],
  },
  {
    name: "if_tsresol 10^-12 truncates to ns",
    blocks: [shb(), idb({ opts: [[IF_TSRESOL, u8(12)]] }), epb(ts(1_700_000_000_123_456_789_999n % 2n ** 64n))],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: String((1_700_000_000_123_456_789_999n % 2n ** 64n) / 1000n) }],
  },
  {
    name: "if_tsresol 2^-10",
    blocks: [shb(), idb({ opts: [[IF_TSRESOL, u8(0x80 | 10)]] }), epb(ts(1_700_000_000n * 1024n + 512n))],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000500000000" }],
    interfaces: [{ tsUnitsPerSec: 1024 }],
  },
  {
    name: "if_tsresol 2^-32 truncates to ns",
    blocks: [shb(), idb({ opts: [[IF_TSRESOL, u8(0x80 | 32)]] }), epb({ tsHi: 1_700_000_000, tsLo: 1 })],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000000000000" }],
  },
  {
    name: "if_tsoffset adds seconds",
    blocks: [shb(), idb({ opts: [[IF_TSOFFSET, u64(1_000_000_000n)]] }), epb(ts(700_000_000_123_456n))],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" }],
    interfaces: [{ tsOffsetSec: 1_000_000_000 }],
  },
  {
    name: "if_tsoffset may be negative (big-endian)",
    blocks: [
      shb({ le: false }),
      idb({ le: false, opts: [[IF_TSOFFSET, u64(-100n, false)]] }),
      epb({ le: false, ...ts(T) }),
    ],
    want: [{ iface: 0, capLen: 60, origLen: 60, tsNs: "1699999900123456000" }],
    interfaces: [{ tsOffsetSec: -100 }],
  },
  {
    name: "if_fcslen in bits and if_name",
    blocks: [
      shb(),
      idb({
        opts: [
          [IF_NAME, text("eth0")],
          [IF_FCSLEN, u8(32)],
          [IF_DESCRIPTION, text("skipped")],
        ],
      }),
    ],
    want: [],
    interfaces: [{ name: "eth0", fcsLen: 4 }],
  },
  {
    name: "if_fcslen 4 read as bytes, as Wireshark does",
    blocks: [shb(), idb({ opts: [[IF_FCSLEN, u8(4)]] })],
    want: [],
    interfaces: [{ fcsLen: 4 }],
  },
  {
    name: "SPB: caplen is the first interface's snaplen, no timestamp",
    blocks: [shb(), idb({ snapLen: 64 }), idb({ linkType: 0 }), spb({ data: payload(100) })],
    want: [{ iface: 0, capLen: 64, origLen: 100, tsNs: null }],
  },
  {
    name: "SPB: snaplen 0 is unlimited",
    blocks: [shb(), idb({ snapLen: 0 }), spb({ data: payload(62) })],
    want: [{ iface: 0, capLen: 62, origLen: 62, tsNs: null }],
  },
  {
    name: "snaplen 0xffffffff sizes nothing: EPB and SPB read as they are",
    blocks: [shb(), idb({ snapLen: 0xffffffff }), epb({ ...ts(T) }), spb({ data: payload(62) })],
    want: [
      { iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
      { iface: 0, capLen: 62, origLen: 62, tsNs: null },
    ],
  },
  {
    name: "SPB: caplen never passes the block",
    blocks: [shb(), idb({ snapLen: 0 }), spb({ data: payload(64), origLen: 1514 })],
    want: [{ iface: 0, capLen: 64, origLen: 1514, tsNs: null }],
  },
  {
    name: "the obsolete Packet Block",
    blocks: [shb(), idb(), idb({ linkType: 0 }), pb({ iface: 1, ...ts(T) })],
    want: [{ iface: 1, capLen: 60, origLen: 60, tsNs: "1700000000123456000" }],
  },
  {
    name: "NRB, ISB, DSB, custom and unknown blocks are skipped",
    blocks: [
      shb(),
      block(4, payload(20)),
      idb(),
      block(5, payload(16)),
      epb(ts(T)),
      block(0xa, payload(8)),
      block(0xbad, payload(12)),
      block(0x40000bad, payload(12)),
      block(0x12345678, payload(3)),
      epb(ts(T)),
    ],
    want: [
      { iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
      { iface: 0, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
    ],
  },
  {
    name: "interfaces with different link types and resolutions in one section",
    blocks: [
      shb(),
      idb({ linkType: 1 }),
      idb({ linkType: 113, opts: [[IF_TSRESOL, u8(9)]] }),
      epb({ iface: 1, ...ts(5_000_000_001n) }),
      epb({ iface: 0, ...ts(5_000_001n) }),
    ],
    want: [
      { iface: 1, capLen: 60, origLen: 60, tsNs: "5000000001" },
      { iface: 0, capLen: 60, origLen: 60, tsNs: "5000001000" },
    ],
    interfaces: [{ linkType: 1 }, { linkType: 113, linkTypeName: "LINUX_SLL", tsUnitsPerSec: 1e9 }],
  },
  {
    // Interface ids restart in each section; the reader numbers them across the file.
    name: "sections change byte order and restart interface ids",
    blocks: [
      shb(),
      idb({ linkType: 1 }),
      idb({ linkType: 0 }),
      epb({ iface: 1, ...ts(T) }),
      shb({ le: false }),
      idb({ le: false, linkType: 101, opts: [[IF_TSRESOL, u8(9)]] }),
      epb({ le: false, iface: 0, ...ts(7n) }),
      spb({ le: false }),
      shb(),
      idb({ linkType: 229 }),
      epb({ iface: 0, ...ts(T) }),
    ],
    want: [
      { iface: 1, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
      { iface: 2, capLen: 60, origLen: 60, tsNs: "7" },
      { iface: 2, capLen: 60, origLen: 60, tsNs: null },
      { iface: 3, capLen: 60, origLen: 60, tsNs: "1700000000123456000" },
    ],
    interfaces: [
      { index: 0, section: 0, linkType: 1 },
      { index: 1, section: 0, linkType: 0, linkTypeName: "NULL" },
      { index: 2, section: 1, linkType: 101 },
      { index: 3, section: 2, linkType: 229, linkTypeName: "IPV6" },
    ],
    sections: 3,
  },
];

describe("pcapng reader", () => {
  it.each(CASES)("$name", ({ blocks, want, interfaces, sections }) => {
    const bytes = concat(...blocks);
    for (const options of [{}, { chunkSize: 16, batchSize: 1 }, { chunkSize: 100, batchSize: 3 }]) {
      const { packets, error, reader } = readBytes(bytes, options);
      expect(error).toBeUndefined();
      expect(packets.map(({ iface, capLen, origLen, tsNs }) => ({ iface, capLen, origLen, tsNs }))).toEqual(want);
      expect(packets.map((p) => p.flags)).toEqual(want.map((w) => (w.tsNs === null ? PACKET_NO_TIMESTAMP : 0)));
      expect(reader?.format).toBe("pcapng");
      expect(reader?.pcapHeader).toBeUndefined();
      if (interfaces !== undefined) {
        expect(reader?.interfaces).toHaveLength(interfaces.length);
        interfaces.forEach((info, i) => expect(reader?.interfaces[i]).toMatchObject(info));
      }
      expect(reader?.sections).toBe(sections ?? 1);
      expect(reader?.bytesRead).toBe(bytes.length);
    }
  });

  it("windows each packet's bytes, padding excluded", () => {
    const datas = [payload(1, 1), payload(2, 2), payload(3, 3), payload(4, 4), payload(0)];
    const { packets } = readBytes(concat(shb(), idb(), ...datas.map((data) => epb({ data }))), {
      chunkSize: 16,
      batchSize: 2,
    });
    expect(packets.map((p) => p.hex)).toEqual(datas.map(hex));
  });
});
