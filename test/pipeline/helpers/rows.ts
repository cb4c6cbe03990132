// The packet-in / packet-out harness: one packet in at an endpoint of a
// description, run as strata run runs it with --trace (./engine-run.ts), and
// every packet out — recorded on which link, or delivered to which member, in
// the order the trace gives — with the drops it met on the way.

import { compile } from "../../../src/control/compile.js";
import type { CompiledSpec } from "../../../src/control/compiled.js";
import { resolveEndpoint } from "../../../src/control/endpoints.js";
import { parseSpec } from "../../../src/description/load.js";
import { DROP_REASONS } from "../../../src/wasm/abi.js";
import { type EngineRun, runEngine } from "./engine-run.js";

export interface Out {
  /** A link's capture name ("lan.h1.1-sw.1") or "deliver:<network.member>". */
  at: string;
  packet: Uint8Array;
}

export interface Ran {
  /** In the order strata wrote them (its trace says which record came when). */
  out: Out[];
  /** Drops by reason. */
  drops: Record<string, number>;
  /** Drops by member and reason: "ip.b bad-header". */
  dropsAt: Record<string, number>;
}

/** Runs one packet; returns what was recorded (the injected link's own crossing left out) and the drops. */
export function run(spec: string, endpoint: string, packet: Uint8Array): Ran {
  const compiled = compile(parseSpec(spec, "case.yaml"));
  const ran = runEngine(
    compiled,
    [endpoint],
    [{ bytes: packet, origLen: packet.length, tsSec: 1, tsNsec: 0, endpoint: 0 }],
    0,
    { trace: true },
  );
  const out = inOrder(ran, compiled);
  // The link the packet was injected on is where it starts, not an output: the first record.
  const ep = resolveEndpoint(compiled, endpoint);
  if (ep.kind === "link" && out[0]?.at === compiled.links[ep.link]?.qualified) out.shift();
  const drops: Record<string, number> = {};
  const dropsAt: Record<string, number> = {};
  ran.counters.drops.forEach((counts, i) => {
    counts.forEach((n, r) => {
      if (n === 0) return;
      const reason = DROP_REASONS[r] ?? "?";
      drops[reason] = (drops[reason] ?? 0) + n;
      const where = `${compiled.members[i - 1]?.qualified ?? "(no member)"} ${reason}`;
      dropsAt[where] = (dropsAt[where] ?? 0) + n;
    });
  });
  return { out, drops, dropsAt };
}

/**
 * Every record of the run's recordings, in the order they were written: the trace's link crossings (of recorded
 * links) and deliveries name the file each next record comes from. Throws if a record is left over or missing.
 */
function inOrder(ran: EngineRun, compiled: CompiledSpec): Out[] {
  const recorded = new Set(compiled.links.flatMap((l) => (l.recorded ? [l.qualified] : [])));
  const next = new Map<string, number>();
  const out: Out[] = [];
  for (const line of ran.trace)
    for (const s of line.steps) {
      const link = String(s["link"]);
      const file =
        s.step === "link" && recorded.has(link)
          ? `links/${link}`
          : s.step === "deliver"
            ? `delivered/${String(s["member"])}`
            : undefined;
      if (file === undefined) continue;
      const k = next.get(file) ?? 0;
      const r = ran.recorded.of(file)[k];
      if (r === undefined) throw new Error(`the trace has ${k + 1} records in ${file}, the recording ${k}`);
      next.set(file, k + 1);
      out.push({ at: file.startsWith("links/") ? link : `deliver:${String(s["member"])}`, packet: r.bytes });
    }
  for (const [file, records] of ran.recorded.files)
    if (records.length !== (next.get(file) ?? 0))
      throw new Error(`${file} has ${records.length} records, the trace ${next.get(file) ?? 0}`);
  return out;
}

/** Outputs as hex, for readable diffs. */
export const hexOuts = (o: readonly Out[]): { at: string; packet: string }[] =>
  o.map((x) => ({ at: x.at, packet: Buffer.from(x.packet).toString("hex") }));
