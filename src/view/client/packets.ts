// The packets of the run, as the page's data holds them (columns of numbers, paths as lists of
// steps), and the search language that picks some of them out.

import type { StepData, TraceData } from "../page-data.js";
import { data, decode64 } from "./dom.js";
import { memberEls } from "./drawing.js";

declare const isoTimeNs: (sec: number, nsec: number) => string;

const PACKET_FIELD_COUNT = 6;

export interface Packets {
  readonly trace: TraceData;
  readonly fields: Uint32Array;
  readonly seconds: Float64Array;
  readonly paths: Uint16Array | Uint32Array;
  readonly starts: Uint32Array;
  /** Packet number → its place in the trace. */
  readonly place: Map<number, number>;
}

export const trace: Packets | undefined = (() => {
  const t = data.run?.trace;
  if (t === undefined) return undefined;
  const fields = new Uint32Array(decode64(t.packets));
  const place = new Map<number, number>();
  for (let i = 0; i < t.count; i++) place.set(fields[i * PACKET_FIELD_COUNT] ?? 0, i);
  return {
    trace: t,
    fields,
    seconds: new Float64Array(decode64(t.seconds)),
    paths: t.wide ? new Uint32Array(decode64(t.paths)) : new Uint16Array(decode64(t.paths)),
    starts: new Uint32Array(decode64(t.pathStarts)),
    place,
  };
})();

export const field = (p: Packets, i: number, k: number): number => p.fields[i * PACKET_FIELD_COUNT + k] ?? 0;
export const numberOf = (p: Packets, i: number): number => field(p, i, 0);

export function stepsOf(p: Packets, i: number): StepData[] {
  const path = field(p, i, 2);
  const out: StepData[] = [];
  for (let k = p.starts[path] ?? 0; k < (p.starts[path + 1] ?? 0); k++)
    out.push(p.trace.steps[p.paths[k] ?? 0] as StepData);
  return out;
}

export function fatesOf(p: Packets, i: number): string[] {
  return (p.trace.fateSets[field(p, i, 4)] ?? []).map((f) => p.trace.fates[f] ?? "");
}

export function headerOf(p: Packets, i: number): string {
  const endpoint = p.trace.endpoints[field(p, i, 1)] ?? "";
  const time = isoTimeNs(p.seconds[i] ?? 0, field(p, i, 5));
  return `packet ${numberOf(p, i)}  ${endpoint}  ${time}  ${field(p, i, 3)} bytes`;
}

export function fateLine(p: Packets, i: number): string {
  const f = fatesOf(p, i);
  const cut = p.trace.cut[String(numberOf(p, i))] ?? 0;
  const more = cut > 0 ? `; ${cut} more steps not kept (the line reached 64 MiB)` : "";
  return `${f.length === 0 ? "(no end recorded)" : f.join("; ")}${more}`;
}

// A search: clauses joined by "and", each a test of a packet (its place in the trace).
export type Test = (i: number) => boolean;

const member = (text: string): string => text.replace(/^([^:.\s]+):/, "$1.");

export function clause(p: Packets, text: string): Test | string {
  const t = text.trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\d+)(?:\s*-\s*(\d+)?)?$/.exec(t)) !== null) {
    const first = Number(m[1]);
    const last = m[2] !== undefined ? Number(m[2]) : t.includes("-") ? Infinity : first;
    return (i) => numberOf(p, i) >= first && numberOf(p, i) <= last;
  }
  const fateTest = (match: (fate: string) => boolean): Test => {
    const sets = p.trace.fateSets.map((s) => s.some((f) => match(p.trace.fates[f] ?? "")));
    return (i) => sets[field(p, i, 4)] === true;
  };
  if ((m = /^delivered(?:\s+to\s+(\S+))?$/.exec(t)) !== null) {
    const who = m[1] === undefined ? undefined : member(m[1]);
    return fateTest((f) => (who === undefined ? f.startsWith("delivered to ") : f === `delivered to ${who}`));
  }
  if ((m = /^dropped(?:\s+at\s+(\S+))?(?:\s+\(?([a-z-]+)\)?)?$/.exec(t)) !== null) {
    const who = m[1] === undefined ? undefined : member(m[1]);
    const reason = m[2];
    return fateTest(
      (f) =>
        f.startsWith(`dropped at ${who ?? ""}`) &&
        (who === undefined || f.startsWith(`dropped at ${who} (`)) &&
        (reason === undefined || f.endsWith(`(${reason})`)),
    );
  }
  if ((m = /^left(?:\s+on\s+(\S+))?$/.exec(t)) !== null) {
    const link = m[1];
    return fateTest((f) => (link === undefined ? f.startsWith("left on ") : f === `left on ${link}`));
  }
  if ((m = /^(via|at)\s+(\S+)$/.exec(t)) !== null) {
    const what = m[1] === "via" ? (m[2] ?? "") : member(m[2] ?? "");
    const node = m[1] === "at" ? memberEls.get(what)?.dataset["node"] : undefined;
    if (m[1] === "via" && data.links[what] === undefined) return `no link ${what}`;
    if (m[1] === "at" && node === undefined) return `no member ${what}`;
    const stepHits = p.trace.steps.map((s) =>
      m?.[1] === "via" ? s.step === "link" && s.link === what : s.nodes.includes(node ?? ""),
    );
    const pathHits = new Uint8Array(p.starts.length);
    for (let path = 0; path + 1 < p.starts.length; path++) {
      for (let k = p.starts[path] ?? 0; k < (p.starts[path + 1] ?? 0); k++) {
        if (stepHits[p.paths[k] ?? 0] === true) {
          pathHits[path] = 1;
          break;
        }
      }
    }
    return (i) => pathHits[field(p, i, 2)] === 1;
  }
  const endpoint = p.trace.endpoints.indexOf(t.replace(/^from\s+/, ""));
  if (endpoint >= 0) return (i) => field(p, i, 1) === endpoint;
  return `'${t}' is not a packet number, an endpoint, delivered, dropped, left, via LINK or at MEMBER`;
}
