// Every real capture reads as tshark reads it, at any chunk and batch size, and the
// pcap ones rewrite byte for byte.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MemoryByteSink } from "../../src/pcap/byte-sink.js";
import { PcapError } from "../../src/pcap/errors.js";
import { PcapWriter, pcapWriterOptionsFrom } from "../../src/pcap/pcap-writer.js";
import { PcapngWriter, pcapngInterfaceOptionsFrom } from "../../src/pcap/pcapng-writer.js";
import { openCapture, openCaptureBytes } from "../../src/pcap/reader.js";
import type { CaptureReader, CaptureWriter, InterfaceInfo } from "../../src/pcap/types.js";
import { drain, readBytes } from "./builders.js";
import { DAMAGED_FILE, REAL_FILES, type TsharkPacket } from "./real-files.js";

/** tshark numbers interfaces within a section; the reader numbers them across the file. */
function fileWideIface(interfaces: readonly InterfaceInfo[], p: TsharkPacket): number | undefined {
  return interfaces.filter((i) => i.section === p.section)[p.interface]?.index;
}

const READ_SHAPES = [
  { label: "default chunks and batches", options: {} },
  { label: "100-byte chunks, batches of 3", options: { chunkSize: 100, batchSize: 3 } },
  { label: "16-byte chunks, batches of 1", options: { chunkSize: 16, batchSize: 1 } },
];

describe.each(REAL_FILES)("$name", (file) => {
  it.each(READ_SHAPES)("reads what tshark reads ($label)", ({ options }) => {
    const { packets, error, reader } = drain(openCapture(file.path, options));
    const interfaces = reader?.interfaces ?? [];
    expect(packets.map((p) => ({ iface: p.iface, capLen: p.capLen, origLen: p.origLen, tsNs: p.tsNs }))).toEqual(
      file.packets.map((p) => ({
        iface: fileWideIface(interfaces, p),
        capLen: p.capLen,
        origLen: p.origLen,
        tsNs: p.tsNs,
      })),
    );
    expect(packets.map((p) => p.index)).toEqual(file.packets.map((_, i) => i));
    if (file.tsharkError === undefined) expect(error).toBeUndefined();
    else expect(error).toBeInstanceOf(PcapError);
  });

  it("rewrites byte for byte (pcap) or reads back the same packets (pcapng)", () => {
    const original = new Uint8Array(readFileSync(file.path));
    const reader = openCaptureBytes(original, file.name);
    const sink = new MemoryByteSink();
    const writer = writerLike(reader, sink);
    let error: unknown;
    try {
      for (const b of reader.batches()) writer.writeBatch(b);
    } catch (err) {
      error = err;
    }
    writer.close();
    const copy = sink.bytes();
    if (reader.format === "pcap") {
      // The damaged file: everything up to the damage.
      const end = error instanceof PcapError ? error.offset : original.length;
      expect(Buffer.from(copy).equals(Buffer.from(original.subarray(0, end)))).toBe(true);
    } else {
      const again = readBytes(copy);
      const first = readBytes(original);
      // The writer has one section: packets keep their file-wide interface and lose nothing else.
      expect(again.packets.map(({ flags: _, tsNs, ...p }) => ({ ...p, tsNs: tsNs ?? "0" }))).toEqual(
        first.packets.map(({ flags: _, tsNs, ...p }) => ({ ...p, tsNs: tsNs ?? "0" })),
      );
    }
  });
});

function writerLike(reader: CaptureReader, sink: MemoryByteSink): CaptureWriter {
  if (reader.pcapHeader !== undefined) return new PcapWriter(sink, pcapWriterOptionsFrom(reader.pcapHeader));
  // pcapng: interfaces appear while reading, so add each as soon as the reader knows it.
  const writer = new PcapngWriter(sink);
  let added = 0;
  const addKnown = (): void => {
    for (; added < reader.interfaces.length; added++) {
      const info = reader.interfaces[added];
      if (info !== undefined) writer.addInterface(pcapngInterfaceOptionsFrom(info));
    }
  };
  return {
    write: writer.write.bind(writer),
    writeBatch(b) {
      addKnown();
      writer.writeBatch(b);
    },
    get bytesWritten() {
      return writer.bytesWritten;
    },
    close: () => writer.close(),
  };
}

describe(DAMAGED_FILE, () => {
  it("gives its one good packet, then says where and what the damage is", () => {
    const file = REAL_FILES.find((f) => f.name === DAMAGED_FILE);
    const { packets, error } = drain(openCapture(file?.path ?? ""));
    expect(packets).toHaveLength(1);
    expect(error).toBeInstanceOf(PcapError);
    const e = error as PcapError;
    expect([e.kind, e.offset]).toEqual(["truncated-record-data", 114]);
    expect(e.message).toContain("byte 114: record says caplen 16896 but only 8756 bytes remain");
  });
});
