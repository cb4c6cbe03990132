// A description's export run on bmv2 (bench/p4/fleet.ts: one simple_switch per machine,
// chained along the links between machines), every packet on a link and every delivery
// recorded; compare() then holds it to `strata run`'s outputs, link by link and member by
// member, packet by packet (in any order: a switch's threads may reorder packets of different
// flows; strata's tables keep no state, so order changes nothing else), loosened only for a
// target limit a test names (Limits).

import type { CompiledSpec } from "../../../src/control/compiled.js";
import type { MachineExport } from "../../../src/p4/export.js";
import { Fleet, type Input } from "../../../bench/p4/fleet.js";
import type { P4Tools } from "./toolchain.js";

export { type Input, Wiring } from "../../../bench/p4/fleet.js";

/** What both sides are compared on. */
export interface Outputs {
  /** Packets on each link, by capture name ("lanA.h1.1-r.1"): both directions, as a tap sees them. */
  readonly links: ReadonlyMap<string, readonly Uint8Array[]>;
  /** Packets each member delivered, by qualified name ("ip.h2"). */
  readonly delivered: ReadonlyMap<string, readonly Uint8Array[]>;
}

export interface Bmv2Run extends Outputs {
  /** Packets a switch sent on a port no manifest names ("machine m port 0: 0a0b…"). */
  readonly unexpected: readonly string[];
  /** simple_switch_CLI's errors while loading runtime_cli.txt, per machine. */
  readonly cliErrors: readonly string[];
  /** Packets passed from one switch to another. */
  readonly relayed: number;
  /** Whether relaying stopped at the bound (a loop between machines: the export has no hop limit there). */
  readonly bounded: boolean;
}

const push = <K, V>(m: Map<K, V[]>, k: K, v: V): void => {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
};

export interface RunOptions {
  /** Stop waiting once this many packets (links and deliveries: what strata had) are seen and the switches are quiet.
   * */
  readonly expected: number;
  /** Quiet time after the expected packets, for any extra one (default 150 ms). */
  readonly settleMs?: number;
  /** Quiet time that ends the wait when fewer come (default 3 s). */
  readonly timeoutMs?: number;
  /** Packets passed between switches before relaying stops (a loop; default 2 × expected + 2,000). */
  readonly maxRelays?: number;
}

/**
 * Runs `inputs` through one switch per machine (a Fleet), records every packet on a link and
 * every delivery, and stops when the switches have been quiet long enough.
 */
export async function runOnBmv2(
  tools: P4Tools,
  compiled: CompiledSpec,
  exports: readonly MachineExport[],
  inputs: readonly Input[],
  options: RunOptions,
): Promise<Bmv2Run> {
  const fleet = await Fleet.start(tools, compiled, exports);
  try {
    const links = new Map<string, Uint8Array[]>();
    const delivered = new Map<string, Uint8Array[]>();
    const unexpected: string[] = [];
    const observable = fleet.wiring.observableCaptures();
    let seen = 0;
    let last = Date.now();
    fleet.maxRelays = options.maxRelays ?? 2 * options.expected + 2_000;
    fleet.departures = (d) => {
      last = Date.now();
      if (d.kind === "delivered") push(delivered, d.member, d.bytes);
      else if (d.kind === "unexpected") unexpected.push(d.what);
      else push(links, fleet.linkName(d.link), d.bytes);
      if (d.kind !== "link" || observable.has(fleet.linkName(d.link))) seen++;
    };
    for (const i of inputs) fleet.inject(i);
    last = Date.now();
    const settle = options.settleMs ?? 150;
    const timeout = options.timeoutMs ?? 3_000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const quiet = Date.now() - last;
      if ((seen >= options.expected && quiet >= settle) || quiet >= timeout) break;
    }
    return { links, delivered, unexpected, cliErrors: fleet.cliErrors, relayed: fleet.relayed, bounded: fleet.bounded };
  } finally {
    await fleet.stop();
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

/**
 * Every difference between a switch running the export and `strata run` that the bmv2 tests
 * allow, by the name docs/p4-export.md gives it (Target limits): a test that allows one names it.
 */
export const TARGET_LIMITS = {
  /** compare() takes every link's and member's packets as a set (always). */
  order: "packet order",
  /** Limits.sameReceiver. */
  anycast: "anycast receiver choice",
  /** Limits.cutShort: a loop inside one machine. */
  passes: "MAX_PASSES",
  /** Limits.cutShort: a loop through several machines. */
  hopLimit: "no hop limit between machines",
  /** Limits.cutShort: strata's copy limit, packet buffers, hop limit. */
  strataBounds: "strata's own bounds",
} as const;

/** A test's title naming the target limits it allows. */
export const allowing = (...limits: (keyof typeof TARGET_LIMITS)[]): string =>
  `target limit: ${limits.map((l) => TARGET_LIMITS[l]).join(", ")}`;

/** How compare() loosens for a target limit (docs/p4-export.md), each asked for by name in a test. */
export interface Limits {
  /** Anycast: which receiver takes a flow is the target's hash: these members' deliveries are compared as one. */
  readonly sameReceiver?: readonly (readonly string[])[];
  /**
   * strata cut the run short at one of its own bounds, which a switch does not have (a loop at
   * the hop limit, copies at the copy limit or holding every packet buffer): every packet strata
   * has, the switches have too, and they may have more (the rounds after strata's last).
   */
  readonly cutShort?: boolean;
}

/**
 * Where the switches and strata part: for every observable capture and every member, the
 * packets only one side has (as hex), or nothing when both have the same packets.
 */
export function compare(
  strata: Outputs,
  bmv2: Bmv2Run,
  observable: ReadonlySet<string>,
  limits: Limits = {},
): Record<string, { strata: string[]; bmv2: string[] }> {
  const out: Record<string, { strata: string[]; bmv2: string[] }> = {};
  const side = (m: ReadonlyMap<string, readonly Uint8Array[]>, k: string): string[] => {
    const all = (limits.sameReceiver?.find((g) => g.includes(k)) ?? [k])
      .flatMap((x) => (m.get(x) ?? []).map(hex))
      .sort();
    return limits.cutShort === true ? [...new Set(all)] : all;
  };
  const differ = (what: string, a: string[], b: string[]): void => {
    // Counted, not searched: a loop that replicates puts tens of thousands of packets on a link.
    const left = new Map<string, number>();
    for (const x of a) left.set(x, (left.get(x) ?? 0) + 1);
    const onlyB: string[] = [];
    for (const x of b) {
      const n = left.get(x) ?? 0;
      if (n > 0) left.set(x, n - 1);
      else onlyB.push(x);
    }
    const onlyA = [...left].flatMap(([x, n]) => Array.from({ length: n }, () => x));
    if (onlyA.length > 0 || (onlyB.length > 0 && limits.cutShort !== true)) out[what] = { strata: onlyA, bmv2: onlyB };
  };
  for (const capture of [...observable].sort())
    differ(`link ${capture}`, side(strata.links, capture), side(bmv2.links, capture));
  for (const member of [...new Set([...strata.delivered.keys(), ...bmv2.delivered.keys()])].sort())
    differ(`delivered ${member}`, side(strata.delivered, member), side(bmv2.delivered, member));
  if (bmv2.unexpected.length > 0) out["ports no manifest names"] = { strata: [], bmv2: [...bmv2.unexpected] };
  if (bmv2.cliErrors.length > 0) out["simple_switch_CLI errors"] = { strata: [], bmv2: [...bmv2.cliErrors] };
  return out;
}

/** How many packets strata put on observable captures and delivered: what the switches should show. */
export function countOf(strata: Outputs, observable: ReadonlySet<string>): number {
  let n = 0;
  for (const [capture, packets] of strata.links) if (observable.has(capture)) n += packets.length;
  for (const packets of strata.delivered.values()) n += packets.length;
  return n;
}
