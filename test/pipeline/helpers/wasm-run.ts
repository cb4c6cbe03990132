// Runs packets through the wasm pipeline and reads back what the reference
// reports (src/model/interpreter.ts): outputs in order, drops per member
// and reason, deliveries, link crossings and row hits.

import type { CompiledSpec } from "../../../src/control/compiled.js";
import { type Injection, install } from "../../../src/control/install.js";
import { DROP_REASONS, TRACE_KINDS } from "../../../src/wasm/abi.js";
import { DataPlane } from "../../../src/wasm/module.js";
import { type InputBatch, Runner, type RunnerOptions, type TraceEvent } from "../../../src/wasm/runner.js";
import type { RefInput, RefOutput, RefResult } from "../../../src/model/interpreter.js";

/**
 * Runner settings a case may vary: limits, and ring sizes small enough that runs pause and resume.
 * With trace, `traceMask` traces input packet k when traceMask[k % its length] (--trace-packets).
 */
export type WasmOptions = Pick<RunnerOptions, "hopLimit" | "copyLimit"> &
  Partial<
    Pick<RunnerOptions, "slots" | "slotLen" | "outputBytes" | "batchPackets" | "batchBytes" | "trace" | "traceEvents">
  > & { readonly traceMask?: readonly boolean[] | undefined };

/**
 * Installs `compiled` in a fresh data plane (throws the installer's InputError) and runs `inputs` as batches.
 * With `onEvent` (and `trace`), every trace event goes to it too, with the entries that tell each table's rows.
 */
export function runWasm(
  compiled: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  first: number,
  options: WasmOptions,
  onEvent?: (e: TraceEvent, entries: ReadonlyMap<number, readonly number[]>) => void,
): RefResult {
  const dp = DataPlane.load();
  const installed = install(dp, compiled, injections);
  const { traceMask, ...runnerOptions } = options;
  const traced = inputs.map(
    (_, k) => options.trace === true && (traceMask === undefined || traceMask[k % traceMask.length] === true),
  );
  const tracePackets =
    traceMask === undefined ? [] : traced.flatMap((t, k) => (t ? [[first + k, first + k] as const] : []));
  const runner = new Runner(dp, {
    maxFanout: compiled.maxFanout,
    trace: false,
    batchBytes: 1 << 16,
    slots: 64,
    slotLen: 4096,
    outputBytes: 1 << 16,
    ...runnerOptions,
    ...(traceMask === undefined ? {} : { tracePackets }),
  });
  const outputs: RefOutput[] = [];
  // Every traced packet's events, and no other's: it begins with its injection.
  const events = inputs.map(() => 0);
  const sink = {
    // Tracing changes when a run pauses, never what it does.
    event(e: TraceEvent): void {
      const k = e.packet - first;
      if (traced[k] !== true) throw new Error(`a trace event for packet ${e.packet}, which is not traced`);
      if ((events[k] ?? 0) === 0 && TRACE_KINDS[e.kind] !== "inject")
        throw new Error(`packet ${e.packet}'s trace begins with ${TRACE_KINDS[e.kind]}`);
      events[k] = (events[k] ?? 0) + 1;
      onEvent?.(e, installed.entries);
    },
    packet(
      kind: "link" | "deliver",
      target: number,
      data: Uint8Array,
      start: number,
      len: number,
      origLen: number,
      tsSec: number,
      tsNsec: number,
      packet: number,
    ): void {
      outputs.push({ kind, target, bytes: data.slice(start, start + len), origLen, tsSec, tsNsec, packet });
    },
  };
  const per = runner.options.batchPackets;
  for (let at = 0; at < inputs.length; at += per) {
    runner.run(batchOf(inputs.slice(at, at + per)), first + at, sink);
  }
  const untraced = traced.findIndex((t, k) => t && events[k] === 0);
  if (untraced >= 0) throw new Error(`packet ${first + untraced} is traced but has no events`);

  const x = dp.exports;
  const drops = new Map<number, number[]>();
  for (let m = -1; m < compiled.members.length; m++) {
    const counts = Array.from(new BigUint64Array(dp.mem.u8.buffer, x.memberDrops(m), DROP_REASONS.length), Number);
    if (counts.some((c) => c > 0)) drops.set(m, counts);
  }
  const hits = new Map<number, number[]>();
  for (const t of compiled.tables) {
    const byEntry = installed.tables.hits(t);
    hits.set(
      t.id,
      (installed.entries.get(t.id) ?? []).map((e) => byEntry[e] ?? 0),
    );
  }
  return {
    outputs,
    drops,
    delivered: compiled.members.map((m) => x.memberDelivered(m.index)),
    linkPackets: compiled.links.map((l) => x.linkPackets(l.index)),
    hits,
  };
}

/** One batch: packet bytes back to back, with their lengths, times and endpoints. */
export function batchOf(inputs: readonly RefInput[]): InputBatch {
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
    endpoint: Uint32Array.from(inputs, (p) => p.endpoint),
  };
}
