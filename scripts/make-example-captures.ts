// Writes the captures of examples whose traffic is real: packets from the
// captures in test/fixtures/pcaps-real/ (written by other people's tools) with
// their addresses rewritten to the example's, and every checksum made right
// again. Run: `node dist/scripts/make-example-captures.js` after `npm run
// build:ts`; the test suite checks that the committed files are what it writes.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openCaptureBytes, PcapWriter, MemoryByteSink } from "../src/pcap/index.js";
import { parseValue } from "../src/description/notation.js";
import type { NameKind } from "../src/wire/designs.js";

/** An address in a design's notation, as its big-endian bytes. */
function addressBytes(text: string, kind: NameKind, len: number): Uint8Array {
  const r = parseValue(text, kind);
  if (!r.ok) throw new Error(`${text}: ${r.problem}`);
  const out = new Uint8Array(len);
  let v = r.value;
  for (let i = len - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

const ETHERNET_LEN = 14;
/** LINKTYPE_RAW: frames that start with the IP header. */
const LINKTYPE_RAW = 101;
const IPV4_CHECKSUM = 10;
const IPV4_SRC = 12;
const IPV4_DST = 16;
const UDP_LEN = 8;
const VXLAN_LEN = 8;
const UDP_CHECKSUM = 6;
const TCP_CHECKSUM = 16;
const PROTO_TCP = 6;
const PROTO_UDP = 17;

/** New Ethernet and IPv4 addresses for one packet of a capture. */
export interface Rewrite {
  readonly packet: number;
  readonly ethSrc: string;
  readonly ethDst: string;
  readonly ipSrc: string;
  readonly ipDst: string;
}

export interface ExampleCapture {
  /** Under pcaps/. */
  readonly file: string;
  /** Under test/fixtures/pcaps-real/. */
  readonly from: string;
  /** Packets kept, with new addresses. */
  readonly rewrites?: readonly Rewrite[];
  /** Or packets kept as the frame a VXLAN packet carries (their indices). */
  readonly vxlanInner?: readonly number[];
  /** Written as raw IP (link type 101): the rewritten frames without their Ethernet header, for an IP network. */
  readonly rawIp?: true;
}

export const EXAMPLE_CAPTURES: readonly ExampleCapture[] = [
  // ip-router: a DNS query from h1 to h2 (through r) and h2's answer, from tcpdump's dns_udp.pcap.
  {
    file: "example-router-h1.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      { packet: 0, ethSrc: "02:00:00:00:0a:01", ethDst: "02:00:00:00:0a:fe", ipSrc: "10.0.1.1", ipDst: "10.0.2.2" },
    ],
  },
  {
    file: "example-router-h2.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      { packet: 1, ethSrc: "02:00:00:00:0b:02", ethDst: "02:00:00:00:0b:fe", ipSrc: "10.0.2.2", ipDst: "10.0.1.1" },
    ],
  },
  // routed-fat-tree: the same DNS query from h1 to h8 (across the core) and h8's answer, each sent by the host itself.
  {
    file: "example-fat-tree-h1.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      { packet: 0, ethSrc: "02:00:00:00:01:08", ethDst: "02:00:00:00:00:04", ipSrc: "10.0.1.8", ipDst: "10.0.1.15" },
    ],
    rawIp: true,
  },
  {
    file: "example-fat-tree-h8.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      { packet: 1, ethSrc: "02:00:00:00:01:0f", ethDst: "02:00:00:00:00:07", ipSrc: "10.0.1.15", ipDst: "10.0.1.8" },
    ],
    rawIp: true,
  },
  // overlay-mesh: the DNS query from vm1 to vm4 (site 1 to site 4, across the VXLAN mesh) and vm4's answer.
  {
    file: "example-overlay-vm1.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      {
        packet: 0,
        ethSrc: "02:00:00:00:01:01",
        ethDst: "02:00:00:00:04:01",
        ipSrc: "192.168.7.1",
        ipDst: "192.168.7.4",
      },
    ],
  },
  {
    file: "example-overlay-vm4.pcap",
    from: "dns_udp.pcap",
    rewrites: [
      {
        packet: 1,
        ethSrc: "02:00:00:00:04:01",
        ethDst: "02:00:00:00:01:01",
        ipSrc: "192.168.7.4",
        ipDst: "192.168.7.1",
      },
    ],
  },
  // vxlan: what the tenant host 00:16:3e:37:f6:04 sent through its VTEP in tcpdump's vxlan.pcap (ARP reply, pings).
  { file: "example-vxlan-vm3.pcap", from: "vxlan.pcap", vxlanInner: [0, 2, 4, 6, 8] },
];

/** One's-complement sum of `len` bytes at `at`, 16 bits at a time (RFC 1071). */
function onesSum(b: Uint8Array, at: number, len: number, sum = 0): number {
  for (let i = 0; i + 1 < len; i += 2) sum += ((b[at + i] ?? 0) << 8) | (b[at + i + 1] ?? 0);
  if (len % 2 === 1) sum += (b[at + len - 1] ?? 0) << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

function put16(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 8;
  b[at + 1] = v & 0xff;
}

/** The frame with new addresses, and its IPv4 header and TCP/UDP checksums computed afresh. */
export function rewriteFrame(frame: Uint8Array, r: Rewrite): Uint8Array {
  const b = Uint8Array.from(frame);
  b.set(addressBytes(r.ethDst, "mac", 6), 0);
  b.set(addressBytes(r.ethSrc, "mac", 6), 6);
  const ip = ETHERNET_LEN;
  const ihl = ((b[ip] ?? 0) & 0xf) * 4;
  b.set(addressBytes(r.ipSrc, "ipv4", 4), ip + IPV4_SRC);
  b.set(addressBytes(r.ipDst, "ipv4", 4), ip + IPV4_DST);
  put16(b, ip + IPV4_CHECKSUM, 0);
  put16(b, ip + IPV4_CHECKSUM, ~onesSum(b, ip, ihl) & 0xffff);
  const proto = b[ip + 9] ?? 0;
  const total = ((b[ip + 2] ?? 0) << 8) | (b[ip + 3] ?? 0);
  const l4 = ip + ihl;
  const l4Len = total - ihl;
  const at = proto === PROTO_UDP ? l4 + UDP_CHECKSUM : proto === PROTO_TCP ? l4 + TCP_CHECKSUM : -1;
  if (at >= 0) {
    put16(b, at, 0);
    // The pseudo-header: addresses, protocol, length.
    let sum = onesSum(b, ip + IPV4_SRC, 8);
    sum = onesSum(Uint8Array.of(0, proto, l4Len >>> 8, l4Len & 0xff), 0, 4, sum);
    sum = onesSum(b, l4, l4Len, sum);
    const c = ~sum & 0xffff;
    put16(b, at, proto === PROTO_UDP && c === 0 ? 0xffff : c);
  }
  return b;
}

/** The frame inside a VXLAN packet on untagged Ethernet: after Ethernet, IPv4 (by IHL), UDP and VXLAN. */
export function vxlanInnerFrame(frame: Uint8Array): Uint8Array {
  const ihl = ((frame[ETHERNET_LEN] ?? 0) & 0xf) * 4;
  return frame.slice(ETHERNET_LEN + ihl + UDP_LEN + VXLAN_LEN);
}

/** The bytes of one example capture, made from the real capture in `realDir`. */
export function makeExampleCapture(c: ExampleCapture, realDir: string): Uint8Array {
  const source = openCaptureBytes(readFileSync(`${realDir}/${c.from}`), c.from);
  const sink = new MemoryByteSink();
  const out = new PcapWriter(sink, {
    linkType: c.rawIp === true ? LINKTYPE_RAW : 1,
    nanosecond: false,
    snapLen: 65535,
  });
  let index = 0;
  for (const batch of source.batches()) {
    for (let i = 0; i < batch.count; i++, index++) {
      const off = batch.offset[i] ?? 0;
      const captured = batch.data.subarray(off, off + (batch.capLen[i] ?? 0));
      const r = c.rewrites?.find((w) => w.packet === index);
      const frame =
        r !== undefined
          ? rewriteFrame(captured, r)
          : c.vxlanInner?.includes(index) === true
            ? vxlanInnerFrame(captured)
            : undefined;
      if (frame === undefined) continue;
      const ip = c.rawIp === true ? frame.subarray(ETHERNET_LEN) : frame;
      const origLen = (batch.origLen[i] ?? captured.length) - (captured.length - ip.length);
      out.write(ip, 0, ip.length, origLen, batch.tsSec[i] ?? 0, batch.tsNsec[i] ?? 0);
    }
  }
  out.close();
  return sink.bytes();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const { writeFileSync } = await import("node:fs");
  for (const c of EXAMPLE_CAPTURES) {
    writeFileSync(
      `${root}pcaps/${c.file}`,
      makeExampleCapture(c, `${process.env.STRATA_REAL_PCAPS ?? `${root}test/fixtures/pcaps-real`}`),
    );
    console.log(`pcaps/${c.file}`);
  }
}
