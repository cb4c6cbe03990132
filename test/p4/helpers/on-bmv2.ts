// A description's export run on bmv2, beside `strata run`: one simple_switch per machine
// (helpers/bmv2.ts), each with its runtime_cli.txt, chained along the description's links
// between machines as the manifests number their ports; the packets go in where the inputs
// say (a link: the receivers' ports; a member sending: port 255 with the packet_out header),
// and every packet a switch sends is recorded on its link (a tap on the wire, as strata's link
// captures are) and passed to the receivers' switches, or, on port 255, recorded as a delivery
// (the packet_in header says to which member). compare() then holds both sides to each other,
// link by link and member by member, packet by packet (in any order: a switch's threads may
// reorder packets of different flows; strata's tables keep no state, so order changes nothing
// else).
//
// What cannot be compared is said, not skipped silently: a link with no port at either end (two
// members of one machine; a virtual link, whose packets travel inside an underlay's frames) is
// not observable on a switch; an input the target cannot take (on such a link, or on an anycast
// link, whose receiver the sender's selector picks) is refused with the reason.

import type { CompiledLink, CompiledSpec } from "../../../src/control/compiled.js";
import type { Injection } from "../../../src/control/install.js";
import { CPU_PORT, isPhysical } from "../../../src/p4/device.js";
import type { MachineExport, MachineManifest } from "../../../src/p4/export.js";
import { LINK_BITS, MEMBER_BITS, SESSION_BITS } from "../../../src/p4/names.js";
import { Switch } from "./bmv2.js";
import { compileAll } from "./p4c.js";
import type { P4Tools } from "./toolchain.js";

/** packet_out.kind (src/p4/program.ts). */
const KIND = { self: 1, session: 2 } as const;

/** What both sides are compared on. */
export interface Outputs {
  /** Packets on each link, by capture name ("lanA.h1.1-r.1"): both directions, as a tap sees them. */
  readonly links: ReadonlyMap<string, readonly Uint8Array[]>;
  /** Packets each member delivered, by qualified name ("ip.h2"). */
  readonly delivered: ReadonlyMap<string, readonly Uint8Array[]>;
}

export interface Input {
  readonly injection: Injection;
  readonly bytes: Uint8Array;
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

/** The manifests' port maps, and where each link's packets go between them. */
export class Wiring {
  readonly #c: CompiledSpec;
  readonly #manifests: ReadonlyMap<string, MachineManifest>;

  constructor(compiled: CompiledSpec, exports: readonly MachineExport[]) {
    this.#c = compiled;
    this.#manifests = new Map(exports.map((ex) => [ex.manifest.machine, ex.manifest]));
  }

  machineOf(member: number): string {
    const m = this.#c.members[member];
    return this.#c.machines[m?.machine ?? -1] ?? "?";
  }

  qualified(member: number): string {
    return this.#c.members[member]?.qualified ?? "?";
  }

  /** The member number a machine's program gives `member` (meta.member, packet_out.member). */
  memberNumber(member: number): number {
    const q = this.qualified(member);
    const n = this.#manifests.get(this.machineOf(member))?.members.find((m) => m.member === q)?.number;
    if (n === undefined) throw new Error(`no member ${q} in machine ${this.machineOf(member)}'s manifest`);
    return n;
  }

  /** The member a packet_in's member number names on `machine`. */
  memberNamed(machine: string, number: number): string | undefined {
    return this.#manifests.get(machine)?.members.find((m) => m.number === number)?.member;
  }

  /** The ports of `machine` where `member` (qualified) sends or receives link `l` on identifier `ident`. */
  #portsFor(machine: string, member: string, ident: number, l: CompiledLink): MachineManifest["ports"] {
    return this.#manifests.get(machine)?.ports.filter((p) => p.member === member && p.link === ident && p.links.includes(l.capture)) ?? [];
  }

  /** Where a packet crossing link `li` arrives: each receiver's machine and port (undefined: a receiver with no port). */
  arrivals(li: number, onlyPeer?: string): ({ machine: string; port: number } | undefined)[] {
    const l = this.#c.links[li];
    if (l === undefined) return [];
    return l.receivers
      .filter((r) => onlyPeer === undefined || `${this.qualified(r.member)}.${r.port}` === onlyPeer)
      .map((r) => {
        const machine = this.machineOf(r.member);
        const port = this.#portsFor(machine, this.qualified(r.member), r.port, l)[0]?.port;
        return port === undefined ? undefined : { machine, port };
      });
  }

  /** Whether a switch sends link `li`'s packets out of a port (and every receiver takes them in on one). */
  observable(li: number): boolean {
    const l = this.#c.links[li];
    if (l === undefined) return false;
    // A sender that sends it in an underlay's session has no port for it (a port for the other direction may carry its name).
    if (!isPhysical(this.#c, l)) return false;
    if (l.sender >= 0 && this.#portsFor(this.machineOf(l.sender), this.qualified(l.sender), l.senderPort, l).length === 0) return false;
    return this.arrivals(li).every((a) => a !== undefined);
  }

  /** Captures strata writes (`capture: false` turns one off) every direction of which a switch port carries: those a test can hold to strata's. */
  observableCaptures(): Set<string> {
    const byCapture = new Map<string, number[]>();
    for (const l of this.#c.links) push(byCapture, l.capture, l.index);
    return new Set([...byCapture].filter(([, links]) => links.every((li) => this.#c.links[li]?.captured === true && this.observable(li))).map(([capture]) => capture));
  }

  /** What a packet a switch sent on `port` is: a delivery, a link's packet (with where it goes), or nothing the manifest names. */
  departure(machine: string, port: number): { link: number; onlyPeer?: string } | undefined {
    const p = this.#manifests.get(machine)?.ports.find((x) => x.port === port);
    if (p === undefined) return undefined;
    const sender = this.#c.members.find((m) => m.qualified === p.member);
    const l = this.#c.links.find((x) => x.sender === sender?.index && x.senderPort === p.link && p.links.includes(x.capture) && isPhysical(this.#c, x));
    if (l === undefined) return undefined;
    // An anycast receiver's own port: the sender's selector picked it.
    const anycast = l.mode === "anycast" && l.receivers.length > 1;
    return anycast ? { link: l.index, ...(p.peers[0] !== undefined ? { onlyPeer: p.peers[0] } : {}) } : { link: l.index };
  }

  /** Why an input cannot go into the switches, or undefined when it can. */
  refusal(inj: Injection): string | undefined {
    if (inj.kind !== "link") return undefined;
    const l = this.#c.links[inj.link];
    if (l === undefined) return "no such link";
    if (!this.observable(inj.link)) return `link ${l.capture} has no port on a switch (a link between members of one machine, or a virtual link)`;
    if (l.mode === "anycast" && l.receivers.length > 1) return `link ${l.capture} is anycast: on a switch its sender's selector picks the receiver`;
    return undefined;
  }
}

export interface RunOptions {
  /** Stop waiting once this many packets (links and deliveries: what strata had) are seen and the switches are quiet. */
  readonly expected: number;
  /** Quiet time after the expected packets, for any extra one (default 150 ms). */
  readonly settleMs?: number;
  /** Quiet time that ends the wait when fewer come (default 3 s). */
  readonly timeoutMs?: number;
  /** Packets passed between switches before relaying stops (a loop; default 2 × expected + 2,000). */
  readonly maxRelays?: number;
}

/** The packet_out header in front of a packet the member sends (kind self) or sends in a session. */
function packetOut(member: number, inj: Injection, bytes: Uint8Array): Uint8Array {
  const header = (MEMBER_BITS + 8 + SESSION_BITS) / 8;
  const b = Buffer.alloc(header + bytes.length);
  b.writeUInt8(member, 0);
  b.writeUInt8(inj.kind === "session" ? KIND.session : KIND.self, 1);
  b.writeUInt32BE(inj.kind === "session" ? inj.session : 0, 2);
  b.set(bytes, header);
  return new Uint8Array(b);
}

/**
 * Runs `inputs` through one simple_switch per machine of `exports` (compiled with p4c-bm2-ss),
 * chained as the wiring says. Throws for an input `refusal` names.
 */
export async function runOnBmv2(tools: P4Tools, compiled: CompiledSpec, exports: readonly MachineExport[], inputs: readonly Input[], options: RunOptions): Promise<Bmv2Run> {
  const wiring = new Wiring(compiled, exports);
  for (const i of inputs) {
    const why = wiring.refusal(i.injection);
    if (why !== undefined) throw new Error(`an input the switches cannot take: ${why}`);
  }
  const programs = await compileAll(tools, exports.map((ex) => ex.files["main.p4"] as string), "bm2");
  const failed = programs.findIndex((p) => p.json === undefined);
  if (failed >= 0) throw new Error(`p4c-bm2-ss failed on ${exports[failed]?.manifest.machine}: ${programs[failed]?.bm2.stderr}`);
  const switches = new Map<string, Switch>();
  try {
    const started = await Promise.all(
      exports.map((ex, k) => Switch.start(tools, programs[k]?.json ?? "", ex.files["runtime_cli.txt"] as string, ex.manifest.deviceId)),
    );
    exports.forEach((ex, k) => {
      const sw = started[k];
      if (sw !== undefined) switches.set(ex.manifest.machine, sw);
    });

    const links = new Map<string, Uint8Array[]>();
    const delivered = new Map<string, Uint8Array[]>();
    const unexpected: string[] = [];
    const observable = wiring.observableCaptures();
    let seen = 0;
    let relayed = 0;
    let bounded = false;
    let last = Date.now();
    const maxRelays = options.maxRelays ?? 2 * options.expected + 2_000;

    const cross = (li: number, bytes: Uint8Array, onlyPeer?: string): void => {
      const capture = compiled.links[li]?.capture ?? "?";
      push(links, capture, bytes);
      if (observable.has(capture)) seen++;
      for (const a of wiring.arrivals(li, onlyPeer)) {
        if (a === undefined) continue;
        if (relayed >= maxRelays) {
          bounded = true;
          return;
        }
        relayed++;
        switches.get(a.machine)?.send(a.port, bytes);
      }
    };
    for (const [machine, sw] of switches) {
      sw.onPacket((port, bytes) => {
        last = Date.now();
        if (port === CPU_PORT) {
          const header = (MEMBER_BITS + LINK_BITS) / 8;
          const member = wiring.memberNamed(machine, bytes[0] ?? 0) ?? `machine ${machine} member ${bytes[0] ?? 0}`;
          push(delivered, member, bytes.slice(header));
          seen++;
          return;
        }
        const d = wiring.departure(machine, port);
        if (d === undefined) {
          unexpected.push(`machine ${machine} port ${port}: ${Buffer.from(bytes).toString("hex")}`);
          seen++;
          return;
        }
        cross(d.link, bytes, d.onlyPeer);
      });
    }

    for (const i of inputs) {
      const inj = i.injection;
      if (inj.kind === "link") cross(inj.link, i.bytes);
      else switches.get(wiring.machineOf(inj.member))?.send(CPU_PORT, packetOut(wiring.memberNumber(inj.member), inj, i.bytes));
    }
    last = Date.now();
    const settle = options.settleMs ?? 150;
    const timeout = options.timeoutMs ?? 3_000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const quiet = Date.now() - last;
      if ((seen >= options.expected && quiet >= settle) || quiet >= timeout) break;
    }
    const cliErrors = [...switches].flatMap(([machine, sw]) => sw.cliErrors.map((e) => `${machine}: ${e}`));
    return { links, delivered, unexpected, cliErrors, relayed, bounded };
  } finally {
    await Promise.all([...switches.values()].map((s) => s.stop()));
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

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
export function compare(strata: Outputs, bmv2: Bmv2Run, observable: ReadonlySet<string>, limits: Limits = {}): Record<string, { strata: string[]; bmv2: string[] }> {
  const out: Record<string, { strata: string[]; bmv2: string[] }> = {};
  const side = (m: ReadonlyMap<string, readonly Uint8Array[]>, k: string): string[] => {
    const all = (limits.sameReceiver?.find((g) => g.includes(k)) ?? [k]).flatMap((x) => (m.get(x) ?? []).map(hex)).sort();
    return limits.cutShort === true ? [...new Set(all)] : all;
  };
  const differ = (what: string, a: string[], b: string[]): void => {
    const onlyA = [...a];
    const onlyB: string[] = [];
    for (const x of b) {
      const k = onlyA.indexOf(x);
      if (k >= 0) onlyA.splice(k, 1);
      else onlyB.push(x);
    }
    if (onlyA.length > 0 || (onlyB.length > 0 && limits.cutShort !== true)) out[what] = { strata: onlyA, bmv2: onlyB };
  };
  for (const capture of [...observable].sort()) differ(`link ${capture}`, side(strata.links, capture), side(bmv2.links, capture));
  for (const member of [...new Set([...strata.delivered.keys(), ...bmv2.delivered.keys()])].sort()) differ(`delivered ${member}`, side(strata.delivered, member), side(bmv2.delivered, member));
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
