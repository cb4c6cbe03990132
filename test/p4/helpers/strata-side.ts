// The strata side of the bmv2 comparison: `strata run` on a description's inputs (the command,
// in process), its link captures and deliveries read back; and the same packets as the inputs
// the switches get (through strata's own input reader: link types, cooked headers, FCS).

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryIo } from "../../../src/cli/io.js";
import { main } from "../../../src/cli/main.js";
import type { CompiledSpec } from "../../../src/control/compiled.js";
import { resolveEndpoint } from "../../../src/control/endpoints.js";
import type { Injection } from "../../../src/control/install.js";
import type { RefInput } from "../../../src/model/interpreter.js";
import { type EngineRun, type EngineRunOptions, runEngine } from "../../pipeline/helpers/engine-run.js";
import { openCapture } from "../../../src/pcap/reader.js";
import { openInputs } from "../../../src/run/inputs.js";
import type { Summary } from "../../../src/engine/summary.js";
import { DROP_REASONS, type DropReason } from "../../../src/wasm/abi.js";
import { DEFAULT_RUNNER } from "../../../src/wasm/runner.js";
import type { Input, Outputs } from "./on-bmv2.js";

export interface StrataRun extends Outputs {
  /** Drops by reason, over every member (summary.json). */
  readonly drops: Readonly<Record<string, number>>;
  readonly stderr: string;
}

/** Every packet of a capture file, as it holds it. */
export function packetsOf(file: string): Uint8Array[] {
  const reader = openCapture(file);
  const out: Uint8Array[] = [];
  try {
    for (const b of reader.batches()) {
      for (let i = 0; i < b.count; i++)
        out.push(b.data.slice(b.offset[i] ?? 0, (b.offset[i] ?? 0) + (b.capLen[i] ?? 0)));
    }
  } finally {
    reader.close();
  }
  return out;
}

/** The files' packets as strata injects them, each at its endpoint; throws when a capture holds a packet cut short by
 * its snaplen (a switch gets whole packets). */
export function readInputs(compiled: CompiledSpec, inputs: readonly { endpoint: string; file: string }[]): Input[] {
  const endpoints = inputs.map((i) => resolveEndpoint(compiled, i.endpoint));
  const opened = openInputs(
    endpoints,
    inputs.map((i) => i.file),
    256,
  );
  const out: Input[] = [];
  try {
    for (const b of opened.batches()) {
      for (let i = 0; i < b.count; i++) {
        const at = b.offset[i] ?? 0;
        const len = b.capLen[i] ?? 0;
        if (len !== b.origLen[i])
          throw new Error(`an input packet of ${len} bytes captured of ${b.origLen[i]}: a switch takes whole packets`);
        const endpoint = typeof b.endpoint === "number" ? b.endpoint : (b.endpoint[i] ?? 0);
        const injection = endpoints[endpoint];
        if (injection === undefined) throw new Error(`no endpoint ${endpoint}`);
        out.push({ injection, bytes: b.data.slice(at, at + len) });
      }
    }
  } finally {
    opened.close();
  }
  return out;
}

/** `strata run SPEC --in … --out TMP`, its outputs read back. */
export async function strataRun(
  spec: string,
  inputs: readonly { endpoint: string; file: string }[],
  extra: readonly string[] = [],
): Promise<StrataRun> {
  const out = mkdtempSync(join(tmpdir(), "strata-vs-bmv2-"));
  try {
    const io = memoryIo();
    const code = await main(
      ["run", spec, ...inputs.flatMap((i) => ["--in", `${i.endpoint}=${i.file}`]), "--out", out, "--force", ...extra],
      io,
    );
    if (code !== 0) throw new Error(`strata run exited ${code}: ${io.stderr.text}`);
    const read = (sub: string): Map<string, Uint8Array[]> => {
      const dir = join(out, sub);
      const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".pcap")) : [];
      return new Map(files.map((f) => [f.slice(0, -".pcap".length), packetsOf(join(dir, f))]));
    };
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    return {
      links: read("links"),
      delivered: read("delivered"),
      drops: summary.drops as Record<string, number>,
      stderr: io.stderr.text,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The data plane's limits and buffers as `strata run` has them, with a hop limit. */
export function strataRunOptions(hopLimit: number): EngineRunOptions {
  return { hopLimit };
}

/**
 * `inputs` through strata's data plane as `strata run` drives it (test/pipeline/helpers/engine-run.ts,
 * with strata run's limits and buffers), for inputs made in a test rather than read
 * from captures.
 */
export function strataOutputs(
  compiled: CompiledSpec,
  inputs: readonly Input[],
): Outputs & { readonly cutShort: number } {
  const injections: Injection[] = [];
  const refInputs: RefInput[] = inputs.map((i, k) => {
    const same = injections.findIndex((j) => j === i.injection);
    const endpoint = same >= 0 ? same : injections.push(i.injection) - 1;
    return { bytes: i.bytes, origLen: i.bytes.length, tsSec: 1, tsNsec: k, endpoint };
  });
  return outputsOf(runEngine(compiled, injections, refInputs, 0, strataRunOptions(DEFAULT_RUNNER.hopLimit)));
}

/**
 * Drops at strata's own bounds, which a switch does not have: the hop limit (a loop), the copy
 * limit, and packet buffers all held by copies of one packet (a deep loop that replicates).
 */
export const STRATA_BOUNDS: readonly DropReason[] = ["loop", "replication-limit", "no-buffer"];

/** How many packets strata dropped at its own bounds, from summary.json's drops by reason. */
export function cutShortIn(drops: Readonly<Record<string, number>>): number {
  return STRATA_BOUNDS.reduce((n, reason) => n + (drops[reason] ?? 0), 0);
}

/** The same outputs from a data plane run in the tests (test/pipeline/helpers/engine-run.ts): its recordings by name;
 * `cutShort` counts drops at strata's own bounds, `loops` those at the hop limit. */
export function outputsOf(r: EngineRun): Outputs & { readonly cutShort: number; readonly loops: number } {
  const links = new Map<string, Uint8Array[]>();
  const delivered = new Map<string, Uint8Array[]>();
  for (const [file, records] of r.recorded.files) {
    const slash = file.indexOf("/");
    (file.startsWith("links/") ? links : delivered).set(
      file.slice(slash + 1),
      records.map((x) => x.bytes),
    );
  }
  let cutShort = 0;
  let loops = 0;
  for (const counts of r.counters.drops) {
    for (const reason of STRATA_BOUNDS) cutShort += counts[DROP_REASONS.indexOf(reason)] ?? 0;
    loops += counts[DROP_REASONS.indexOf("loop")] ?? 0;
  }
  return { links, delivered, cutShort, loops };
}
