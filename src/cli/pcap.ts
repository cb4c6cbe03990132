// `strata pcap inspect FILE... [--json]`: the packets of captures, as a table or one JSON object a line
// (the command's definition is commands/pcap.ts).

import { openCapture } from "../pcap/reader.js";
import { type CaptureReader, PACKET_NO_TIMESTAMP, type PacketBatch, tsNs } from "../pcap/types.js";
import { TextTable } from "./format.js";
import { isoTimeNs } from "../time.js";
import type { Io } from "./io.js";

/** Lists the packets of one capture on `io`: a table, or one JSON object a line. */
export async function inspectFile(file: string, json: boolean, io: Io): Promise<void> {
  const reader = openCapture(file);
  try {
    if (json) await inspectJson(reader, io);
    else await inspectTable(reader, io);
  } finally {
    reader.close();
  }
}

async function inspectJson(reader: CaptureReader, io: Io): Promise<void> {
  const prefix = `{"file":${JSON.stringify(reader.name)},"index":`;
  for (const b of reader.batches()) {
    let text = "";
    for (let i = 0; i < b.count; i++) {
      const info = reader.interfaces[b.iface[i] ?? 0];
      // The Interface ID as the file gives it (per section), as tshark reports it.
      text +=
        `${prefix}${b.firstIndex + i},"interface":${info?.idInSection ?? 0},"linkType":${info?.linkType ?? 0},` +
        `"tsNs":${timestamp(b, i, (sec, nsec) => `"${tsNs(sec, nsec)}"`, "null")},` +
        `"capLen":${b.capLen[i] ?? 0},"origLen":${b.origLen[i] ?? 0}}\n`;
    }
    io.stdout.write(text);
    await io.stdout.flush();
  }
}

async function inspectTable(reader: CaptureReader, io: Io): Promise<void> {
  io.stdout.write(`${reader.name}: ${describeFile(reader)}\n`);
  const table = new TextTable([
    { title: "index", width: 5 },
    { title: "iface" },
    { title: "link type", align: "left", width: 9 },
    { title: "time (UTC)", align: "left", width: 30 },
    { title: "caplen", width: 6 },
    { title: "origlen", width: 7 },
  ]);
  io.stdout.write(table.header());
  let packets = 0;
  for (const b of reader.batches()) {
    let text = "";
    for (let i = 0; i < b.count; i++) {
      const info = reader.interfaces[b.iface[i] ?? 0];
      text += table.row([
        String(b.firstIndex + i),
        reader.sections > 1 ? `${info?.section ?? 0}/${info?.idInSection ?? 0}` : String(info?.idInSection ?? 0),
        info?.linkTypeName ?? "?",
        timestamp(b, i, isoTimeNs, "-"),
        String(b.capLen[i] ?? 0),
        String(b.origLen[i] ?? 0),
      ]);
    }
    packets += b.count;
    io.stdout.write(text);
    await io.stdout.flush();
  }
  io.stdout.write(`${packets} ${packets === 1 ? "packet" : "packets"}\n`);
  if (reader.format === "pcapng") {
    const ifaces = new TextTable(
      [
        { title: "section" },
        { title: "iface" },
        { title: "link type", align: "left", width: 16 },
        { title: "snaplen" },
        { title: "units/s", width: 10 },
        { title: "name", align: "left" },
      ],
      "  ",
    );
    io.stdout.write(
      `${reader.sections} ${reader.sections === 1 ? "section" : "sections"}, interfaces:\n${ifaces.header()}`,
    );
    for (const info of reader.interfaces) {
      io.stdout.write(
        ifaces.row([
          String(info.section),
          String(info.idInSection),
          `${info.linkTypeName} (${info.linkType})`,
          String(info.snapLen),
          String(info.tsUnitsPerSec),
          info.name ?? "",
        ]),
      );
    }
  }
  await io.stdout.flush();
}

function timestamp(b: PacketBatch, i: number, format: (sec: number, nsec: number) => string, none: string): string {
  if (((b.flags[i] ?? 0) & PACKET_NO_TIMESTAMP) !== 0) return none;
  return format(b.tsSec[i] ?? 0, b.tsNsec[i] ?? 0);
}

function describeFile(reader: CaptureReader): string {
  const h = reader.pcapHeader;
  if (h === undefined) return "pcapng";
  const info = reader.interfaces[0];
  const fcs = info !== undefined && info.fcsLen > 0 ? `, ${info.fcsLen}-byte FCS` : "";
  return (
    `pcap ${h.versionMajor}.${h.versionMinor}, ${h.bigEndian ? "big" : "little"}-endian, ` +
    `${h.nanosecond ? "ns" : "µs"} timestamps, snaplen ${h.snapLen}, ` +
    `link type ${info?.linkTypeName ?? "?"} (${info?.linkType ?? "?"})${fcs}`
  );
}
