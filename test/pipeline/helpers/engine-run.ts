// Packets through the data plane as `strata run` drives it (src/run/replay.ts):
// an Engine opened on the description and its endpoints, connected to
// recordings and, with a trace, to trace lines; batches run one after the
// other; then disconnected. What comes back is what strata run writes: each
// recording's pcap records (DIR/links, DIR/delivered), the counters summary.json
// is made of (drops by member and reason, deliveries, link crossings, row
// hits), and trace.jsonl's lines. Each engine opens on the data plane of the one
// before (Engine.open's `after`: its tables destroyed), not on a new instance:
// thousands of cases otherwise pay an instance each and the collections of
// their memories (~40% of the differential tests' CPU).

import type { CompiledSpec } from "../../../src/control/compiled.js";
import type { Injection, Installed } from "../../../src/control/install.js";
import { Engine, type EngineOptions } from "../../../src/engine/engine.js";
import type { Counters } from "../../../src/engine/summary.js";
import { checkTraceLine, type TraceLine } from "../../../src/engine/trace.js";
import type { RefInput } from "../../../src/model/interpreter.js";
import { DEFAULT_RUNNER, type InputBatch } from "../../../src/wasm/runner.js";
import { Recorded } from "./recorded.js";

/** What `strata run` takes from its flags (its defaults where not given), and the engine's buffers. */
export interface EngineRunOptions {
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  readonly batchPackets?: number;
  readonly buffers?: EngineOptions["buffers"];
  /** --trace: a line per packet traced. */
  readonly trace?: boolean;
  /** With trace, input packet k is traced when traceMask[k % its length] (--trace-packets); all when not given. */
  readonly traceMask?: readonly boolean[] | undefined;
}

export interface EngineRun {
  readonly recorded: Recorded;
  readonly counters: Counters;
  /** The tables as installed: each compiled row's entry (counters.hits is by entry). */
  readonly installed: Installed;
  /** Every trace line, in the order written: one per packet traced, in packet order. */
  readonly trace: readonly TraceLine[];
}

/**
 * The CLI's text for an injection (src/control/endpoints.ts), or undefined for one that has none: a session the
 * member's send table does not name, which only a controller's packet-out reaches (Engine.endpointAt).
 */
export function endpointText(c: CompiledSpec, inj: Injection): string | undefined {
  const m = c.members[inj.member];
  const l = c.links[inj.link];
  // A member is named in its own network, which a bridging link it sends on is not.
  const net = c.networks[m?.network ?? l?.network ?? -1]?.name ?? "?";
  if (inj.kind === "link")
    return m === undefined ? `${net}:${l?.external ?? "?"}` : `${net}:${m.key}.${l?.senderOutLink ?? "?"}`;
  if (inj.kind === "self") return `${net}:${m?.key ?? "?"}`;
  const named = (m?.tables.send?.spec?.rows ?? []).some((r) => r.session === inj.session);
  return named ? `${net}:${m?.key ?? "?"}@${inj.session}` : undefined;
}

const sameInjection = (a: Injection | undefined, b: Injection): boolean =>
  a?.kind === b.kind && a.member === b.member && a.link === b.link && a.session === b.session;
const show = (a: Injection | undefined): string =>
  a === undefined ? "none" : JSON.stringify({ kind: a.kind, member: a.member, link: a.link, session: a.session });

/** The engine of the last runEngine: the next opens on its data plane (Engine.open's `after`), not a new one. */
let last: Engine | undefined;

function openOptions(compiled: CompiledSpec, endpoints: readonly string[], options: EngineRunOptions): EngineOptions {
  return {
    compiled,
    endpoints,
    ...(options.hopLimit !== undefined ? { hopLimit: options.hopLimit } : {}),
    ...(options.copyLimit !== undefined ? { copyLimit: options.copyLimit } : {}),
    ...(options.batchPackets !== undefined ? { batchPackets: options.batchPackets } : {}),
    ...(options.buffers !== undefined ? { buffers: options.buffers } : {}),
  };
}

/**
 * Opens an Engine on `compiled` (throws what Engine.open throws: SpecError for rows the installer refuses),
 * with `endpoints` as strata run's --in names them (an injection: by its text, see endpointText), and runs
 * `inputs`, numbered from `first`, in batches of batchPackets.
 */
export function runEngine(
  compiled: CompiledSpec,
  endpoints: readonly (string | Injection)[],
  inputs: readonly RefInput[],
  first: number,
  options: EngineRunOptions,
): EngineRun {
  const texts = endpoints.map((e) => (typeof e === "string" ? e : endpointText(compiled, e)));
  // Endpoints with a text come first, as --in gives them; the others are added as a packet-out adds its own.
  const named = texts.flatMap((t) => (t === undefined ? [] : [t]));
  let engine: Engine;
  try {
    engine = Engine.open(openOptions(compiled, named, options), last);
  } finally {
    last = undefined; // a data plane an open refused is not used again
  }
  last = engine;
  const number: number[] = endpoints.map((e, k) => {
    const text = texts[k];
    const n = text === undefined ? engine.endpointAt(e as Injection, "test") : named.indexOf(text);
    const at = engine.endpoints[n];
    if (typeof e !== "string" && !sameInjection(at, e))
      throw new Error(`endpoint ${k}: ${JSON.stringify(e)} is '${text}', ${at?.text} in the engine: ${show(at)}`);
    return n;
  });

  const { traceMask } = options;
  const traced = inputs.map(
    (_, k) => options.trace === true && (traceMask === undefined || traceMask[k % traceMask.length] === true),
  );
  const trace: TraceLine[] = [];
  const recorded = new Recorded(compiled);
  engine.connect({
    recordings: recorded,
    ...(options.trace === true
      ? {
          trace: {
            lines: {
              line(packet: number, text: string): void {
                const r = checkTraceLine(JSON.parse(text));
                if (!r.ok) throw new Error(`trace line of packet ${packet}: ${r.problem}\n${text}`);
                trace.push(r.value);
              },
            },
            ...(traceMask === undefined
              ? {}
              : { packets: traced.flatMap((t, k) => (t ? [[first + k, first + k] as const] : [])) }),
          },
        }
      : {}),
  });
  const per = options.batchPackets ?? DEFAULT_RUNNER.batchPackets;
  for (let at = 0; at < inputs.length; at += per) {
    engine.run(batchOf(inputs.slice(at, at + per), number), first + at);
  }
  engine.disconnect();

  // Tracing changes how a run pauses, never what it does: one line for each packet traced, in order, from its
  // injection.
  const want = traced.flatMap((t, k) => (t ? [first + k] : []));
  const got = trace.map((l) => l.packet);
  if (got.join() !== want.join()) throw new Error(`trace lines for packets ${got.join()}; traced: ${want.join()}`);
  for (const l of trace)
    if (l.steps[0]?.step !== "inject") throw new Error(`packet ${l.packet}'s trace begins with ${l.steps[0]?.step}`);
  return { recorded, counters: engine.counters(), installed: engine.installed, trace };
}

/** One batch: packet bytes back to back, with their lengths, times and endpoints (`number` maps them to the
 * engine's). */
export function batchOf(inputs: readonly RefInput[], number?: readonly number[]): InputBatch {
  const total = inputs.reduce((n, p) => n + p.bytes.length, 0);
  const data = new Uint8Array(Math.max(total, 1));
  const offset = new Uint32Array(inputs.length);
  let at = 0;
  inputs.forEach((p, i) => {
    offset[i] = at;
    data.set(p.bytes, at);
    at += p.bytes.length;
  });
  return {
    data,
    count: inputs.length,
    offset,
    capLen: Uint32Array.from(inputs, (p) => p.bytes.length),
    origLen: Uint32Array.from(inputs, (p) => p.origLen),
    tsSec: Float64Array.from(inputs, (p) => p.tsSec),
    tsNsec: Uint32Array.from(inputs, (p) => p.tsNsec),
    endpoint: Uint32Array.from(inputs, (p) => number?.[p.endpoint] ?? p.endpoint),
  };
}

/** Row hits by compiled row, by table id (the reference's RefResult.hits), from counters by entry. */
export function rowHits(run: EngineRun): Map<number, number[]> {
  return new Map(
    run.installed.compiled.tables.map((t) => {
      const byEntry = run.counters.hits.get(t.id) ?? [];
      const entries = run.installed.entries.get(t.id) ?? [];
      return [t.id, t.rows.map((_, k) => byEntry[entries[k] ?? -1] ?? 0)];
    }),
  );
}

/** Drop counts by member index (−1: before any member), only members with drops (RefResult.drops). */
export function dropsByMember(run: EngineRun): Map<number, number[]> {
  const drops = new Map<number, number[]>();
  run.counters.drops.forEach((counts, i) => {
    if (counts.some((n) => n > 0)) drops.set(i - 1, counts);
  });
  return drops;
}
