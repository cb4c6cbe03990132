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
import { HANG_MS } from "../../helpers/wait.js";

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
  /** Whether relaying stopped at the bound (a loop between machines: the export has no hop limit there): counted, not
   * timed. */
  readonly bounded: boolean;
}

const push = <K, V>(m: Map<K, V[]>, k: K, v: V): void => {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

export interface RunOptions {
  /** What strata wrote: the run lasts until the switches have shown every packet of it (as compare() counts them). */
  readonly strata: Outputs;
  /** The captures compared (Wiring.observableCaptures()). */
  readonly observable: ReadonlySet<string>;
  /** How compare() will loosen: a packet strata cut short need show only once. */
  readonly limits?: Limits;
  /**
   * A loop between machines that strata followed at its largest hop limit: the run lasts until the
   * switches have passed on LOOP_PAST packets more than strata had (no TTL ends it on them), and
   * relaying stops there.
   */
  readonly loop?: boolean;
  /** Run on simple_switch_grpc switches started with no program, this putting the export on them first (strata
   * deploy), instead of simple_switch loaded with runtime_cli.txt. */
  readonly deploy?: (addresses: ReadonlyMap<string, string>) => Promise<void>;
}

/** Packets passed between switches beyond strata's, in a loop, that show the switches loop (`loop`). */
const LOOP_PAST = 100;

/**
 * Quiet time, once the switches have shown every packet strata has (and relaying stopped, for a
 * loop), for a packet more than strata's: on a slow machine it may miss one, never fail a run.
 */
const SETTLE_MS = 150;

/**
 * Runs `inputs` through one switch per machine (a Fleet), records every packet on a link and
 * every delivery, and stops once the switches have shown every packet strata has — counted, not
 * timed — and (`loop`) passed packets between them up to the bound; then briefly quiet.
 */
export async function runOnBmv2(
  tools: P4Tools,
  compiled: CompiledSpec,
  exports: readonly MachineExport[],
  inputs: readonly Input[],
  options: RunOptions,
): Promise<Bmv2Run> {
  const fleet =
    options.deploy === undefined
      ? await Fleet.start(tools, compiled, exports)
      : await Fleet.startGrpc(tools, compiled, exports);
  try {
    await options.deploy?.(fleet.addresses);
    const links = new Map<string, Uint8Array[]>();
    const delivered = new Map<string, Uint8Array[]>();
    const unexpected: string[] = [];
    const { observable } = options;
    const limits = options.limits ?? {};
    const waiting = wanted(options.strata, observable, limits);
    let missing = [...waiting.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0);
    const saw = (key: string, bytes: Uint8Array): void => {
      const want = waiting.get(key);
      const h = hex(bytes);
      const n = want?.get(h) ?? 0;
      if (n === 0) return;
      want?.set(h, n - 1);
      missing--;
    };
    // Past what strata had: where a loop is expected, soon; elsewhere, far enough to stop one nobody expected.
    const had = countOf(options.strata, observable);
    fleet.maxRelays = options.loop === true ? had + LOOP_PAST : 2 * had + 2_000;
    await new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let queued = false;
      // Packets restart the wait: short once all of strata's are in, long while some are still to come. Looked at once
      // the packets that came together are told (the fleet marks itself bounded after telling of the packet it stops).
      const wait = (): void => {
        queued = false;
        clearTimeout(timer);
        const done = missing === 0 && (options.loop !== true || fleet.bounded);
        // Still missing some after HANG_MS of quiet: the switches will not send them (compare() says which).
        timer = setTimeout(resolve, done ? SETTLE_MS : HANG_MS);
      };
      const waitAfter = (): void => {
        if (!queued) queueMicrotask(wait);
        queued = true;
      };
      fleet.departures = (d) => {
        if (d.kind === "delivered") {
          push(delivered, d.member, d.bytes);
          saw(deliveredKey(d.member, limits), d.bytes);
        } else if (d.kind === "unexpected") unexpected.push(d.what);
        else {
          const capture = fleet.linkName(d.link);
          push(links, capture, d.bytes);
          if (observable.has(capture)) saw(linkKey(capture), d.bytes);
        }
        waitAfter();
      };
      for (const i of inputs) fleet.inject(i);
      wait();
    });
    return { links, delivered, unexpected, cliErrors: fleet.cliErrors, relayed: fleet.relayed, bounded: fleet.bounded };
  } finally {
    await fleet.stop();
  }
}

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

/** compare()'s key for a capture's packets. */
const linkKey = (capture: string): string => `link ${capture}`;

/** compare()'s key for a member's deliveries: its group's, where a test compares a group as one (Limits.sameReceiver).
 * */
const deliveredKey = (member: string, limits: Limits): string =>
  `delivered ${(limits.sameReceiver?.find((g) => g.includes(member)) ?? [member]).join(" or ")}`;

/** One side's packets (as hex) by compare()'s keys: every observable capture, every member; each packet once when cut
 * short. */
function sides(o: Outputs, observable: ReadonlySet<string>, limits: Limits): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const capture of observable) out.set(linkKey(capture), (o.links.get(capture) ?? []).map(hex));
  for (const [member, packets] of o.delivered) {
    const key = deliveredKey(member, limits);
    out.set(key, [...(out.get(key) ?? []), ...packets.map(hex)]);
  }
  if (limits.cutShort === true) for (const [key, list] of out) out.set(key, [...new Set(list)]);
  return out;
}

/** Strata's packets the switches must show, counted by compare()'s key and packet. */
function wanted(strata: Outputs, observable: ReadonlySet<string>, limits: Limits): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [key, list] of sides(strata, observable, limits)) {
    const counts = new Map<string, number>();
    for (const x of list) counts.set(x, (counts.get(x) ?? 0) + 1);
    out.set(key, counts);
  }
  return out;
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
  const [s, b] = [sides(strata, observable, limits), sides(bmv2, observable, limits)];
  for (const key of [...new Set([...s.keys(), ...b.keys()])].sort())
    differ(key, [...(s.get(key) ?? [])].sort(), [...(b.get(key) ?? [])].sort());
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
