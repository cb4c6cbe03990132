// A replay: a description, captures injected at endpoints, and an output
// directory. Everything per packet happens in the data plane; this file only
// moves batches in and records out.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import { install } from "../control/install.js";
import { InputError } from "../errors.js";
import { loadSpec } from "../spec/load.js";
import { DataPlane } from "../wasm/module.js";
import { DEFAULT_RUNNER, Runner } from "../wasm/runner.js";
import { Inputs } from "./inputs.js";
import { CaptureOutputs, prepareOutDir } from "./outputs.js";
import { type Summary, summarize } from "./summary.js";
import { TraceWriter } from "./trace.js";

export interface ReplayOptions {
  readonly spec: string;
  /** `--in ENDPOINT=FILE`, in the order given. */
  readonly inputs: readonly { readonly endpoint: string; readonly file: string }[];
  readonly out: string;
  readonly trace?: boolean;
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** Called after each batch with bytes read so far and in all. */
  readonly progress?: (done: number, total: number, packets: number) => void;
}

export interface ReplayResult {
  readonly summary: Summary;
  readonly compiled: CompiledSpec;
  /** The bad input that stopped the replay early, after the good packets before it. */
  readonly error?: InputError;
}

export function replay(options: ReplayOptions): ReplayResult {
  const compiled = compile(loadSpec(options.spec));
  const endpoints = options.inputs.map((i) => resolveEndpoint(compiled, i.endpoint));
  const inputs = new Inputs(
    endpoints.map((e, k) => ({ endpoint: e.text, file: options.inputs[k]?.file ?? "", injection: k, design: e.network.spec.design, payload: e.kind === "session" })),
    DEFAULT_RUNNER.batchPackets,
  );
  try {
    const dp = DataPlane.load();
    const installed = install(dp, compiled, endpoints);
    const runner = new Runner(dp, {
      trace: options.trace === true,
      maxFanout: compiled.maxFanout,
      hopLimit: options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
      copyLimit: options.copyLimit ?? DEFAULT_RUNNER.copyLimit,
      // A buffer holds the largest packet the inputs can carry, plus room for pushed headers.
      slotLen: Math.min(65535, Math.max(2048, inputs.maxCapLen)) + DEFAULT_RUNNER.headroom,
    });
    prepareOutDir(options.out);
    const outputs = new CaptureOutputs(options.out, compiled);
    const trace = options.trace === true ? new TraceWriter(join(options.out, "trace.jsonl"), compiled, installed.entries) : undefined;
    const sink = trace === undefined ? outputs : { packet: outputs.packet.bind(outputs), event: trace.event.bind(trace) };
    const names = endpoints.map((e) => e.text);
    let first = 0;
    let error: InputError | undefined;
    const started = process.hrtime.bigint();
    try {
      for (const batch of inputs.batches()) {
        trace?.startBatch(first, batch, names);
        runner.run(batch, first, sink);
        first += batch.count;
        options.progress?.(inputs.bytesRead, inputs.totalBytes, first);
      }
    } catch (err) {
      // Damage in a capture: what came before it was replayed and is kept.
      if (!(err instanceof InputError)) throw err;
      error = err;
    } finally {
      outputs.close();
      trace?.close();
    }
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    const summary = summarize(dp, installed, inputs.stats, elapsed, error?.message);
    writeFileSync(join(options.out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    return { summary, compiled, ...(error !== undefined ? { error } : {}) };
  } finally {
    inputs.close();
  }
}
