// Writers: write → read gives the packets back; read → write gives the same bytes.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryByteSink } from "../../src/pcap/byte-sink.js";
import { PcapWriter, pcapWriterOptionsFrom } from "../../src/pcap/pcap-writer.js";
import { type PcapngInterfaceOptions, PcapngWriter, pcapngInterfaceOptionsFrom } from "../../src/pcap/pcapng-writer.js";
import { openCapture, openCaptureBytes } from "../../src/pcap/reader.js";
import { tsResolution } from "../../src/pcap/timestamp.js";
import { drain, hex, readBytes } from "./builders.js";

interface Packet {
  data: Uint8Array;
  origLen: number;
  sec: number;
  nsec: number;
  iface: number;
}

const packetArb = (ifaces: number): fc.Arbitrary<Packet> =>
  fc
    .record({
      data: fc.uint8Array({ maxLength: 90 }),
      extra: fc.nat({ max: 2000 }),
      sec: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      nsec: fc.integer({ min: 0, max: 999_999_999 }),
      iface: fc.nat({ max: ifaces - 1 }),
    })
    .map(({ data, extra, sec, nsec, iface }) => ({ data, origLen: data.length + extra, sec, nsec, iface }));

const ns = (sec: number, nsec: number): bigint => BigInt(sec) * 1_000_000_000n + BigInt(nsec);

describe("PcapWriter", () => {
  it("round-trips any packets in any byte order and precision", () => {
    const config = fc.record({
      bigEndian: fc.boolean(),
      nanosecond: fc.boolean(),
      snapLen: fc.integer({ min: 1, max: 262_144 }),
      linkType: fc.integer({ min: 0, max: 0xffff }),
      fcsLen: fc.constantFrom(0, 2, 4),
    });
    fc.assert(
      fc.property(
        config,
        fc.array(packetArb(1), { maxLength: 20 }),
        fc.integer({ min: 16, max: 300 }),
        (options, packets, chunkSize) => {
          const sink = new MemoryByteSink();
          const writer = new PcapWriter(sink, { ...options, bufferSize: 64 });
          for (const p of packets) writer.write(p.data, 0, p.data.length, p.origLen, p.sec, p.nsec);
          writer.close();
          const bytes = sink.bytes();
          expect(writer.bytesWritten).toBe(bytes.length);
          const { packets: read, error, reader } = readBytes(bytes, { chunkSize, batchSize: 3 });
          expect(error).toBeUndefined();
          expect(reader?.interfaces[0]).toMatchObject({
            linkType: options.linkType,
            snapLen: options.snapLen,
            fcsLen: options.fcsLen,
          });
          expect(read.map((p) => [p.hex, p.origLen, p.tsNs])).toEqual(
            packets.map((p) => [
              hex(p.data),
              p.origLen,
              String(ns(p.sec, options.nanosecond ? p.nsec : p.nsec - (p.nsec % 1000))),
            ]),
          );
          // And back again: the same bytes.
          const header = reader?.pcapHeader;
          if (header === undefined) throw new Error("pcap reader without a header");
          const again = new MemoryByteSink();
          const rewriter = new PcapWriter(again, pcapWriterOptionsFrom(header));
          const r2 = readBytes(bytes);
          expect(r2.error).toBeUndefined();
          for (const p of r2.packets) {
            const data = Buffer.from(p.hex, "hex");
            const t = BigInt(p.tsNs ?? "0");
            rewriter.write(data, 0, data.length, p.origLen, Number(t / 1_000_000_000n), Number(t % 1_000_000_000n));
          }
          rewriter.close();
          expect(Buffer.from(again.bytes()).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it.each([
    { name: "negative seconds", sec: -1 },
    { name: "seconds past 2^32", sec: 2 ** 32 },
  ])("refuses $name", ({ sec }) => {
    const writer = new PcapWriter(new MemoryByteSink(), { linkType: 1 });
    expect(() => writer.write(new Uint8Array(4), 0, 4, 4, sec, 0)).toThrow(RangeError);
  });

  it("refuses a span outside the data", () => {
    const writer = new PcapWriter(new MemoryByteSink(), { linkType: 1 });
    expect(() => writer.write(new Uint8Array(4), 2, 4, 4, 0, 0)).toThrow(RangeError);
  });
});

const TSRESOLS = [0, 3, 6, 9, 0x80 | 1, 0x80 | 10, 0x80 | 20, 0x80 | 29];

describe("PcapngWriter", () => {
  it("round-trips any packets over several interfaces", () => {
    const ifaceArb: fc.Arbitrary<PcapngInterfaceOptions> = fc
      .record({
        linkType: fc.integer({ min: 0, max: 0xffff }),
        snapLen: fc.nat(),
        tsResol: fc.constantFrom(...TSRESOLS),
        name: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
        fcsLen: fc.constantFrom(0, 2, 4),
      })
      .map(({ name, ...rest }) => (name === undefined ? rest : { ...rest, name }));
    const scenario = fc
      .record({ bigEndian: fc.boolean(), ifaces: fc.array(ifaceArb, { minLength: 1, maxLength: 3 }) })
      .chain((s) => fc.record({ s: fc.constant(s), packets: fc.array(packetArb(s.ifaces.length), { maxLength: 20 }) }));
    fc.assert(
      fc.property(scenario, fc.integer({ min: 16, max: 300 }), ({ s, packets }, chunkSize) => {
        const sink = new MemoryByteSink();
        const writer = new PcapngWriter(sink, { bigEndian: s.bigEndian, bufferSize: 64 });
        for (const opts of s.ifaces) writer.addInterface(opts);
        for (const p of packets) writer.write(p.data, 0, p.data.length, p.origLen, p.sec, p.nsec, p.iface);
        writer.close();
        const bytes = sink.bytes();
        const { packets: read, error, reader } = readBytes(bytes, { chunkSize, batchSize: 2 });
        expect(error).toBeUndefined();
        expect(read.map((p) => [p.hex, p.origLen, p.iface])).toEqual(
          packets.map((p) => [hex(p.data), p.origLen, p.iface]),
        );
        read.forEach((r, i) => {
          const p = packets[i] as Packet;
          const unitNs = 1e9 / tsResolution(s.ifaces[p.iface]?.tsResol ?? 6).unitsPerSec;
          const lost = ns(p.sec, p.nsec) - BigInt(r.tsNs ?? "0");
          // Rounded down, by less than one unit.
          expect(lost >= 0n && Number(lost) < Math.max(1, unitNs)).toBe(true);
        });
        expect(
          reader?.interfaces.map(
            ({ index, section, idInSection, linkTypeName, tsUnitsPerSec, tsOffsetSec, ...rest }) => rest,
          ),
        ).toEqual(s.ifaces.map(({ tsResol, ...rest }) => ({ snapLen: 0, fcsLen: 0, ...rest })));
        // Read → write: the same bytes.
        const again = new MemoryByteSink();
        const rewriter = new PcapngWriter(again, { bigEndian: s.bigEndian });
        const r2 = readBytes(bytes);
        for (const info of r2.reader?.interfaces ?? []) rewriter.addInterface(pcapngInterfaceOptionsFrom(info));
        for (const p of r2.packets) {
          const data = Buffer.from(p.hex, "hex");
          const t = BigInt(p.tsNs ?? "0");
          rewriter.write(
            data,
            0,
            data.length,
            p.origLen,
            Number(t / 1_000_000_000n),
            Number(t % 1_000_000_000n),
            p.iface,
          );
        }
        rewriter.close();
        expect(Buffer.from(again.bytes()).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("refuses a packet on an interface it was not given", () => {
    const writer = new PcapngWriter(new MemoryByteSink());
    writer.addInterface({ linkType: 1 });
    expect(() => writer.write(new Uint8Array(4), 0, 4, 4, 0, 0, 1)).toThrow(RangeError);
  });

  it.each([10, 0x80 | 30])("refuses if_tsresol %i, finer than a ns", (tsResol) => {
    expect(() => new PcapngWriter(new MemoryByteSink()).addInterface({ linkType: 1, tsResol })).toThrow(RangeError);
  });
});

describe("writing files", () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-pcap-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["pcap", "pcapng"])("%s through a small buffer and back through small chunks", (format) => {
    const path = join(dir, `many.${format}`);
    const writer =
      format === "pcap"
        ? new PcapWriter(path, { linkType: 1, bufferSize: 100 })
        : new PcapngWriter(path, { bufferSize: 100 });
    if (writer instanceof PcapngWriter) writer.addInterface({ linkType: 1 });
    const data = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    for (let i = 0; i < 1000; i++) writer.write(data, i % 50, 10 + (i % 200), 1500, 1_700_000_000 + i, i * 1000);
    writer.close();
    expect(readFileSync(path).length).toBe(writer.bytesWritten);
    const { packets, error } = drain(openCapture(path, { chunkSize: 100, batchSize: 7 }));
    expect(error).toBeUndefined();
    expect(packets).toHaveLength(1000);
    packets.forEach((p, i) => {
      expect(p.hex).toBe(hex(data.subarray(i % 50, (i % 50) + 10 + (i % 200))));
      expect(p.tsNs).toBe(String(ns(1_700_000_000 + i, i * 1000)));
    });
  });
});

describe("memory", () => {
  it("reads a file many chunks long in one chunk-sized buffer", () => {
    const sink = new MemoryByteSink();
    const writer = new PcapWriter(sink, { linkType: 1 });
    const frame = new Uint8Array(64);
    for (let i = 0; i < 5000; i++) writer.write(frame, 0, 64, 64, i, 0);
    writer.close();
    const reader = openCaptureBytes(sink.bytes(), "many.pcap", { chunkSize: 4096, batchSize: 16 });
    const sizes = new Set<number>();
    let packets = 0;
    for (const b of reader.batches()) {
      sizes.add(b.data.length);
      packets += b.count;
    }
    expect([packets, [...sizes]]).toEqual([5000, [4096]]);
  });

  it("grows the buffer only for a record larger than a chunk", () => {
    const sink = new MemoryByteSink();
    const writer = new PcapWriter(sink, { linkType: 1 });
    writer.write(new Uint8Array(60), 0, 60, 60, 0, 0);
    writer.write(new Uint8Array(300), 0, 300, 300, 0, 0);
    writer.close();
    const { packets, error } = readBytes(sink.bytes(), { chunkSize: 100 });
    expect(error).toBeUndefined();
    expect(packets.map((p) => p.capLen)).toEqual([60, 300]);
  });
});
