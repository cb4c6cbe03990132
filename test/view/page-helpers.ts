// Reading a page strata view wrote, in Node: its data, and a packet's lines as the page
// shows them (header, steps, fate), for comparing with `strata trace --packet N`.

import { gunzipSync } from "node:zlib";
import { isoTimeNs } from "../../src/time.js";
import { PACKET_FIELDS, type PageData, type StepData } from "../../src/view/page-data.js";

export function pageDataOf(html: string): PageData {
  const m = /<script type="application\/json\+gzip\+base64" id="strata-data">([\s\S]*?)<\/script>/.exec(html);
  if (m === null) throw new Error("no strata-data in the page");
  return JSON.parse(gunzipSync(Buffer.from(m[1] ?? "", "base64")).toString("utf8")) as PageData;
}

const u32 = (b64: string): Uint32Array => {
  const b = Buffer.from(b64, "base64");
  return new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};

/** Packet `packet`'s lines as the page draws them, or undefined when the page has no such packet. */
export function packetLines(data: PageData, packet: number): { lines: string[]; steps: StepData[] } | undefined {
  const t = data.run?.trace;
  if (t === undefined) return undefined;
  const n = PACKET_FIELDS.length;
  const fields = u32(t.packets);
  const b = Buffer.from(t.seconds, "base64");
  const seconds = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const pb = Buffer.from(t.paths, "base64");
  const paths = t.wide
    ? new Uint32Array(pb.buffer.slice(pb.byteOffset, pb.byteOffset + pb.byteLength))
    : new Uint16Array(pb.buffer.slice(pb.byteOffset, pb.byteOffset + pb.byteLength));
  const starts = u32(t.pathStarts);
  for (let i = 0; i < t.count; i++) {
    const f = (k: number): number => fields[i * n + k] ?? 0;
    if (f(0) !== packet) continue;
    const steps: StepData[] = [];
    for (let k = starts[f(2)] ?? 0; k < (starts[f(2) + 1] ?? 0); k++) steps.push(t.steps[paths[k] ?? 0] as StepData);
    const fates = (t.fateSets[f(4)] ?? []).map((x) => t.fates[x] ?? "");
    const cut = t.cut[String(packet)] ?? 0;
    const more = cut > 0 ? `; ${cut} more steps not kept (the line reached 64 MiB)` : "";
    return {
      steps,
      lines: [
        `packet ${packet}  ${t.endpoints[f(1)] ?? ""}  ${isoTimeNs(seconds[i] ?? 0, f(5))}  ${f(3)} bytes`,
        ...steps.map((s) => `  [${s.copy}] ${s.text}`),
        `  → ${fates.length === 0 ? "(no end recorded)" : fates.join("; ")}${more}`,
      ],
    };
  }
  return undefined;
}
