// An engine as strata serve opens one (src/cli/serve.ts): the description at `spec`, its exits
// reported to listeners, deliveries too when asked, and with `out` what strata run writes there
// (the recordings, a trace, and summary.json when stop() is called).

import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { Outputs } from "../../src/engine/outputs.js";
import type { Summary } from "../../src/engine/summary.js";
import type { PacketRanges } from "../../src/wasm/runner.js";

export interface ServedOptions {
  readonly spec: string;
  readonly endpoints: readonly string[];
  readonly out?: string;
  readonly trace?: boolean;
  readonly tracePackets?: PacketRanges;
  /** With trace: once trace.jsonl holds this many bytes, tracing stops and `onTraceFull` hears its bytes and lines. */
  readonly traceMaxBytes?: number;
  readonly onTraceFull?: (trace: { readonly bytes: number; readonly packets: number }) => void;
  readonly deliveries?: boolean;
  readonly emptyTables?: boolean;
  readonly flushMs?: number;
}

export interface Served {
  readonly em: Engine;
  /** Stops the engine and writes summary.json into `out`. */
  stop(): Summary;
}

export function openServed(o: ServedOptions): Served {
  const compiled = compile(loadSpec(o.spec));
  const em = Engine.open({
    compiled,
    endpoints: o.endpoints,
    ...(o.emptyTables === true ? { emptyTables: true } : {}),
    ...(o.flushMs !== undefined ? { flushMs: o.flushMs } : {}),
  });
  const out =
    o.out === undefined
      ? undefined
      : Outputs.open(o.out, compiled, { command: "serve", inputs: [o.spec], force: false, trace: o.trace === true });
  const trace = out?.trace;
  const max = o.traceMaxBytes;
  em.connect({
    ...(out !== undefined ? { recordings: out.recordings } : {}),
    exits: true,
    deliveries: o.deliveries === true,
    ...(trace !== undefined
      ? {
          trace: {
            lines: trace,
            ...(o.tracePackets !== undefined ? { packets: o.tracePackets } : {}),
            ...(max !== undefined
              ? {
                  full: () => trace.bytes >= max,
                  onFull: () => o.onTraceFull?.({ bytes: trace.bytes, packets: trace.lines }),
                }
              : {}),
          },
        }
      : {}),
  });
  return {
    em,
    stop: () => {
      const summary = em.stop();
      try {
        return out?.finish(summary) ?? summary;
      } finally {
        out?.release();
      }
    },
  };
}
