// What one packet does, seen two ways: by the data plane as strata run drives it
// (its trace.jsonl: links crossed, deliveries, drops, the description rows it hit) and by the
// analysis (src/analysis/explore.ts) run on the packet's header classes. And
// packets built from a header class, for the other direction: every class the
// analysis says goes somewhere is held to what the data plane does with a
// packet of it.

import type { CompiledSpec } from "../../../src/control/compiled.js";
import type { Injection } from "../../../src/control/install.js";
import { PORT_PROTOCOLS, TPID_CUSTOMER, TPID_SERVICE, headerDesign } from "../../../src/model/headers.js";
import type { RefInput } from "../../../src/model/interpreter.js";
import type { Analysis } from "../../../src/analysis/analysis.js";
import { explore, type PathEvent, type Start, type StartLevel } from "../../../src/analysis/explore.js";
import type { HeaderSpace } from "../../../src/analysis/header-space.js";
import { NO_HOPS, oneHop, someHop } from "../../../src/analysis/hops.js";
import { concat } from "../../pcap/builders.js";
import { ethernetFrame } from "../../pipeline/helpers/packets.js";
import { runEngine } from "../../pipeline/helpers/engine-run.js";

/** What happened to one packet, as sets of names. */
export interface Observation {
  readonly links: Set<string>;
  readonly delivered: Set<string>;
  /** "member reason", loops left out. */
  readonly drops: Set<string>;
  readonly loop: boolean;
  /** "member role row": the description rows it hit (a header table's by what the row does: rowName). */
  readonly rows: Set<string>;
}

export type Seen = Observation | { readonly skip: string };

const empty = (): Observation => ({
  links: new Set(),
  delivered: new Set(),
  drops: new Set(),
  loop: false,
  rows: new Set(),
});

/** Reasons the analysis does not model: lengths, buffers and copy limits. */
const UNMODELLED = new Set(["too-long", "replication-limit", "no-buffer"]);

/** Runs the packets through the data plane with a trace, one observation a packet (or why it is not comparable). */
export function emulate(
  c: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  hopLimit: number,
): Seen[] | undefined {
  const seen = inputs.map(empty);
  const skip: (string | undefined)[] = inputs.map(() => undefined);
  let trace;
  try {
    trace = runEngine(c, injections, inputs, 0, {
      hopLimit,
      copyLimit: 256,
      trace: true,
      buffers: { traceEvents: 1 << 14, slots: 300 },
    }).trace;
  } catch (err) {
    if (err instanceof Error && err.name === "InputError") return undefined;
    if ((err as { constructor?: { name?: string } })?.constructor?.name === "InputError") return undefined;
    throw err;
  }
  for (const line of trace) {
    const o = seen[line.packet];
    if (o === undefined) continue;
    for (const step of line.steps) {
      const member = String(step["member"] ?? "?");
      if (step.step === "link") o.links.add(String(step["link"] ?? "?"));
      else if (step.step === "deliver") o.delivered.add(member);
      else if (step.step === "drop") {
        const reason = String(step["reason"]);
        if (UNMODELLED.has(reason)) skip[line.packet] = reason;
        if (reason === "loop") (o as { loop: boolean }).loop = true;
        else o.drops.add(`${member} ${reason}`);
      } else if (LOOKUPS.has(step.step) && typeof step["row"] === "number")
        o.rows.add(rowName(c, member, step.step, step["row"]));
    }
  }
  return seen.map((o, i) => (skip[i] === undefined ? o : { skip: skip[i] ?? "" }));
}

/**
 * A row hit, as observations compare it: "member role row", and in a header table (acquire, forward, receive)
 * "member role" and what the row does. The analysis cuts header classes by what rows do: a class may hold headers
 * that two rows of one action take, and it names the row its witness header takes (src/analysis/tables.ts).
 */
export function rowName(c: CompiledSpec, member: string, role: string, row: number): string {
  if (role !== "acquire" && role !== "forward" && role !== "receive") return `${member} ${role} ${row}`;
  const spec = c.members.find((m) => m.qualified === member)?.tables[role]?.spec?.rows[row];
  const action = JSON.stringify(spec?.action, (k, v: unknown) =>
    k === "at" ? undefined : typeof v === "bigint" ? String(v) : v instanceof Map ? [...v] : v,
  );
  return `${member} ${role} does ${action}`;
}

/** The trace's steps of a table lookup; a description row hit is a number (not "default", not null: a miss). */
const LOOKUPS = new Set(["acquire", "forward", "transmit", "receive", "send"]);

/** The start of an injection, as the analysis names it. */
export function startOf(inj: Injection): Start {
  return inj.kind === "link"
    ? { kind: "link", link: inj.link }
    : inj.kind === "self"
      ? { kind: "self", member: inj.member }
      : { kind: "session", member: inj.member, session: inj.session };
}

/** The network whose header an injection's packet starts with (none: a session's payload). */
function spaceOf(a: Analysis, start: Start): HeaderSpace | undefined {
  if (start.kind === "session") return undefined;
  if (start.kind === "self") return a.member(start.member).space;
  const l = a.topology.link(start.link);
  return a.member(l.sender >= 0 ? l.sender : (l.receivers[0]?.member ?? 0)).space;
}

/** The class of a header read from `bytes` as `space`'s design, its length, and the bytes after it (trimmed to what the
 * next design states). */
function classOf(space: HeaderSpace, bytes: Uint8Array): { atom: number; hops: bigint; len: number } | undefined {
  const parsed = headerDesign(space.design.name).parse(bytes);
  if (parsed === undefined) return undefined;
  const hop = space.hopField === undefined ? undefined : parsed.fields.get(space.hopField.name);
  return { atom: space.classify(parsed.fields), hops: hop === undefined ? NO_HOPS : oneHop(hop), len: parsed.len };
}

/** The analysis of one concrete packet: its classes, read from its bytes level by level as the path pops them. */
export function predict(a: Analysis, inj: Injection, bytes: Uint8Array, hopLimit: number): Seen {
  const start = startOf(inj);
  const space = spaceOf(a, start);
  const first = space === undefined ? undefined : classOf(space, bytes);
  if (space !== undefined && first === undefined) return { skip: "unparsed" };
  /** Bytes of each injected level, by the designs above it. */
  const at = (designs: readonly string[]): Uint8Array | undefined => {
    let b = bytes;
    for (const d of designs.slice(0, -1)) {
      const parsed = headerDesign(d).parse(b);
      if (parsed === undefined) return undefined;
      b = b.subarray(parsed.len);
    }
    const last = designs.at(-1);
    const stated = last === undefined ? undefined : headerDesign(last).statedLen?.(b);
    return stated === undefined ? b : b.subarray(0, stated);
  };
  const o = empty();
  let approximate = false;
  let events = 0;
  explore(
    a,
    start,
    {
      hopLimit,
      ...(first === undefined ? {} : { atoms: [first.atom], hops: first.hops }),
      payload: (designs, s) => {
        const b = at(designs);
        const c = b === undefined ? undefined : classOf(s, b);
        return c === undefined || c.atom < 0 ? "bad" : { atom: c.atom, hops: c.hops };
      },
    },
    (e) => {
      events++;
      record(a, o, e);
      if (e.approximate) approximate = true;
    },
  );
  if (approximate) return { skip: "approximate" };
  if (events > 200_000) return { skip: "too many paths" };
  return o;
}

/** Adds an event of the analysis to an observation, in the data plane's names. */
export function record(a: Analysis, o: Observation, e: PathEvent): void {
  const c = a.compiled;
  const member = (i: number): string => c.members[i]?.qualified ?? "?";
  for (const s of e.path) if (s.kind === "row") o.rows.add(rowName(c, member(s.member), s.role, s.row));
  if (e.kind === "cross") o.links.add(c.links[e.link]?.qualified ?? "?");
  else if (e.kind === "deliver") o.delivered.add(member(e.member));
  else if (e.kind === "loop" || (e.kind === "drop" && e.reason === "loop")) (o as { loop: boolean }).loop = true;
  else if (e.kind === "drop") o.drops.add(`${member(e.member)} ${e.reason ?? "?"}`);
}

/** Where two observations of one packet part, in words ("" when they agree). */
export function differ(wasm: Observation, analysis: Observation): string {
  const parts: string[] = [];
  const sets: [string, Set<string>, Set<string>][] = [
    ["links", wasm.links, analysis.links],
    ["delivered", wasm.delivered, analysis.delivered],
    ["drops", wasm.drops, analysis.drops],
    ["rows", wasm.rows, analysis.rows],
  ];
  for (const [name, w, x] of sets) {
    const onlyW = [...w].filter((v) => !x.has(v));
    const onlyX = [...x].filter((v) => !w.has(v));
    if (onlyW.length + onlyX.length > 0)
      parts.push(`${name}: wasm only [${onlyW.join("; ")}], analysis only [${onlyX.join("; ")}]`);
  }
  if (wasm.loop !== analysis.loop) parts.push(`loop: wasm ${wasm.loop}, analysis ${analysis.loop}`);
  return parts.join("\n");
}

/** A header of `space`'s design with these field values and hop value, in front of `inner`. */
function buildHeader(
  space: HeaderSpace,
  fields: ReadonlyMap<string, bigint>,
  hop: number,
  inner: Uint8Array,
  innermost: boolean,
): Uint8Array {
  const d = space.design.name;
  const f = new Map(fields);
  if (space.hopField !== undefined) f.set(space.hopField.name, BigInt(hop));
  if (d === "ethernet") {
    const v = (n: string): number => Number(f.get(n) ?? 0n);
    const type = v("type");
    // Two tags when an inner VLAN is set, or the ethertype is itself a tag's TPID (a third tag is not read).
    const two = v("ivid") !== 0 || [TPID_CUSTOMER, TPID_SERVICE, 0x9100].includes(type);
    const tags = two
      ? [
          { tpid: TPID_SERVICE, vid: v("vid"), pcp: v("pcp") },
          { tpid: TPID_CUSTOMER, vid: v("ivid") },
        ]
      : v("vid") !== 0 || v("pcp") !== 0
        ? [{ tpid: TPID_CUSTOMER, vid: v("vid"), pcp: v("pcp") }]
        : [];
    return ethernetFrame({ dst: f.get("dst") ?? 0n, src: f.get("src") ?? 0n, tags, type, payload: inner });
  }
  let body = inner;
  if (d === "ipv4" && innermost && PORT_PROTOCOLS.has(Number(f.get("proto") ?? 0n))) {
    // Ports are the payload's first bytes.
    const ports = new Uint8Array(4);
    new DataView(ports.buffer).setUint16(0, Number(f.get("sport") ?? 0n));
    new DataView(ports.buffer).setUint16(2, Number(f.get("dport") ?? 0n));
    body = concat(ports, inner);
  }
  return concat(headerDesign(d).build(f, body.length), body);
}

/**
 * A packet of the start's classes: each level's witness header, over a payload. Undefined when the
 * built packet is not in those classes (an IPv4 header's ports are its payload's first bytes).
 */
export function packetOf(
  a: Analysis,
  inj: Injection,
  start: readonly (StartLevel | undefined)[],
  payload: Uint8Array = Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8),
): Uint8Array | undefined {
  const levels = [...start];
  let bytes: Uint8Array = payload;
  for (let k = levels.length - 1; k >= 0; k--) {
    const l = levels[k];
    if (l === undefined) return undefined;
    bytes = buildHeader(l.space, l.space.witness(l.atom), someHop(l.hops), bytes, k === levels.length - 1);
  }
  // Read back: each level must be in its class.
  let b = bytes;
  const s = spaceOf(a, startOf(inj));
  for (const l of levels) {
    if (l === undefined) return undefined;
    const c = classOf(l.space, b);
    if (c === undefined || c.atom !== l.atom || (c.hops & l.hops) === 0n) return undefined;
    b = b.subarray(c.len);
  }
  if (s !== undefined && levels[0]?.space !== s) return undefined;
  return bytes;
}
