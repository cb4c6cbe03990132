// A description's export on bmv2: one simple_switch per machine (bmv2.ts), each compiled with
// p4c-bm2-ss (p4c.ts) and loaded with its runtime_cli.txt, chained along the description's links
// between machines as the manifests number their ports. An input goes in where strata injects
// it (a link: the receivers' ports; a member sending: port 255 with the packet_out header);
// every packet a switch sends is told to `departures` — on a link (a tap on the wire, as
// strata's link captures are), then passed to the receivers' switches; on port 255, a delivery
// (the packet_in header says to which member). The bmv2 tests (test/p4/bmv2*.test.ts) and the
// bench (bench/bmv2.ts) run exports this way.
//
// What a switch cannot carry is said: a link with no port at either end (two members of one
// machine; a virtual link, whose packets travel inside an underlay's frames) is not observable
// on a switch; an input it cannot take (on such a link, or on an anycast link, whose receiver the
// sender's selector picks) is refused with the reason.

import type { CompiledLink, CompiledSpec } from "../../src/control/compiled.js";
import type { Injection } from "../../src/control/install.js";
import { CPU_PORT, isPhysical } from "../../src/p4/device.js";
import type { MachineExport, MachineManifest } from "../../src/p4/export.js";
import { LINK_BITS, MEMBER_BITS, SESSION_BITS } from "../../src/p4/names.js";
import { Switch } from "./bmv2.js";
import { compileAll } from "./p4c.js";
import type { P4Tools } from "./toolchain.js";

/** packet_out.kind (src/p4/program.ts). */
const KIND = { self: 1, session: 2 } as const;

const push = <K, V>(m: Map<K, V[]>, k: K, v: V): void => {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
};

/** A packet going in, where strata injects it. */
export interface Input {
  readonly injection: Injection;
  readonly bytes: Uint8Array;
}

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
    return (
      this.#manifests
        .get(machine)
        ?.ports.filter((p) => p.member === member && p.link === ident && p.links.includes(l.qualified)) ?? []
    );
  }

  /** Where a packet crossing link `li` arrives: each receiver's machine and port (undefined: a receiver with no port).
   * */
  arrivals(li: number, onlyPeer?: string): ({ machine: string; port: number } | undefined)[] {
    const l = this.#c.links[li];
    if (l === undefined) return [];
    return l.receivers
      .filter((r) => onlyPeer === undefined || `${this.qualified(r.member)}.${r.inLink}` === onlyPeer)
      .map((r) => {
        const machine = this.machineOf(r.member);
        const port = this.#portsFor(machine, this.qualified(r.member), r.inLink, l)[0]?.port;
        return port === undefined ? undefined : { machine, port };
      });
  }

  /** Whether a switch sends link `li`'s packets out of a port (and every receiver takes them in on one). */
  observable(li: number): boolean {
    const l = this.#c.links[li];
    if (l === undefined) return false;
    // A sender that sends it in an underlay's session has no port for it (a port for the other direction may carry its
    // name).
    if (!isPhysical(this.#c, l)) return false;
    if (
      l.sender >= 0 &&
      this.#portsFor(this.machineOf(l.sender), this.qualified(l.sender), l.senderOutLink, l).length === 0
    )
      return false;
    return this.arrivals(li).every((a) => a !== undefined);
  }

  /** Captures strata writes (`record: false` turns one off) every direction of which a switch port carries: those a
   * test can hold to strata's. */
  observableCaptures(): Set<string> {
    const byName = new Map<string, number[]>();
    for (const l of this.#c.links) push(byName, l.qualified, l.index);
    return new Set(
      [...byName]
        .filter(([, links]) => links.every((li) => this.#c.links[li]?.recorded === true && this.observable(li)))
        .map(([name]) => name),
    );
  }

  /** What a packet a switch sent on `port` is: a delivery, a link's packet (with where it goes), or nothing the
   * manifest names. */
  departure(machine: string, port: number): { link: number; onlyPeer?: string } | undefined {
    const p = this.#manifests.get(machine)?.ports.find((x) => x.port === port);
    if (p === undefined) return undefined;
    const sender = this.#c.members.find((m) => m.qualified === p.member);
    const l = this.#c.links.find(
      (x) =>
        x.sender === sender?.index &&
        x.senderOutLink === p.link &&
        p.links.includes(x.qualified) &&
        isPhysical(this.#c, x),
    );
    if (l === undefined) return undefined;
    // An anycast receiver's own port: the sender's selector picked it.
    const anycast = l.mode === "anycast" && l.receivers.length > 1;
    return anycast
      ? { link: l.index, ...(p.peers[0] !== undefined ? { onlyPeer: p.peers[0] } : {}) }
      : { link: l.index };
  }

  /** Why an input cannot go into the switches, or undefined when it can. */
  refusal(inj: Injection): string | undefined {
    if (inj.kind !== "link") return undefined;
    const l = this.#c.links[inj.link];
    if (l === undefined) return "no such link";
    if (!this.observable(inj.link))
      return `link ${l.qualified} has no port on a switch (a link between members of one machine, or a virtual link)`;
    if (l.mode === "anycast" && l.receivers.length > 1)
      return `link ${l.qualified} is anycast: on a switch its sender's selector picks the receiver`;
    return undefined;
  }
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

/** What a switch sent, as the wiring reads it. */
export type Departure =
  | { readonly kind: "delivered"; readonly member: string; readonly bytes: Uint8Array }
  | { readonly kind: "link"; readonly link: number; readonly bytes: Uint8Array }
  | { readonly kind: "unexpected"; readonly what: string };

/**
 * One simple_switch per machine of `exports` (compiled with p4c-bm2-ss, entries from
 * runtime_cli.txt), chained as the wiring says: a packet a switch sends on a port is passed to
 * the receivers' switches; `departures` hears of every packet a switch sends.
 */
export class Fleet {
  readonly wiring: Wiring;
  readonly #compiled: CompiledSpec;
  readonly #switches: ReadonlyMap<string, Switch>;
  /** Packets passed from one switch to another; relaying stops at `maxRelays`. */
  relayed = 0;
  maxRelays = Number.POSITIVE_INFINITY;
  /** Links down (by index): what is sent on them is heard of, and reaches no receiver. */
  readonly down = new Set<number>();
  bounded = false;
  departures: (d: Departure) => void = () => undefined;

  private constructor(compiled: CompiledSpec, wiring: Wiring, switches: ReadonlyMap<string, Switch>) {
    this.#compiled = compiled;
    this.wiring = wiring;
    this.#switches = switches;
    for (const [machine, sw] of switches) sw.onPacket((port, bytes) => this.#departed(machine, port, bytes));
  }

  static async start(tools: P4Tools, compiled: CompiledSpec, exports: readonly MachineExport[]): Promise<Fleet> {
    const programs = await compileAll(
      tools,
      exports.map((ex) => ex.files["main.p4"] as string),
      "bm2",
    );
    const failed = programs.findIndex((p) => p.json === undefined);
    if (failed >= 0)
      throw new Error(`p4c-bm2-ss failed on ${exports[failed]?.manifest.machine}: ${programs[failed]?.bm2.stderr}`);
    const started = await Promise.allSettled(
      exports.map((ex, k) => Switch.start(tools, programs[k]?.json ?? "", ex.manifest.deviceId)),
    );
    const fleet = await Fleet.#of(compiled, exports, started);
    try {
      await Switch.load(
        tools,
        started.flatMap((r, k) =>
          r.status === "fulfilled" ? [{ sw: r.value, commands: exports[k]?.files["runtime_cli.txt"] as string }] : [],
        ),
      );
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  /**
   * One simple_switch_grpc per machine of `exports`, started with no program (a controller sets
   * each one's pipeline and entries: strata deploy onto `addresses`), chained as `start`'s are.
   * With `packetIo`, port 255 is each switch's P4Runtime CPU port: deliveries are packet-ins on the
   * controller's stream (not departures), and its packet-outs enter there.
   */
  static async startGrpc(
    tools: P4Tools,
    compiled: CompiledSpec,
    exports: readonly MachineExport[],
    packetIo = false,
  ): Promise<Fleet> {
    const cpuPort = packetIo ? CPU_PORT : undefined;
    const started = await Promise.allSettled(
      exports.map((ex) => Switch.startGrpc(tools, ex.manifest.deviceId, cpuPort)),
    );
    return Fleet.#of(compiled, exports, started);
  }

  /** The fleet of the switches started, one per machine of `exports`; if any failed to start, the others stopped and
   * the first failure thrown. */
  static async #of(
    compiled: CompiledSpec,
    exports: readonly MachineExport[],
    started: readonly PromiseSettledResult<Switch>[],
  ): Promise<Fleet> {
    const switches = new Map<string, Switch>();
    started.forEach((r, k) => {
      if (r.status === "fulfilled") switches.set(exports[k]?.manifest.machine ?? "?", r.value);
    });
    const refused = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (refused !== undefined) {
      await Promise.all([...switches.values()].map((sw) => sw.stop()));
      throw refused.reason;
    }
    return new Fleet(compiled, new Wiring(compiled, exports), switches);
  }

  /** Each machine's simple_switch_grpc (startGrpc), HOST:PORT. */
  get addresses(): ReadonlyMap<string, string> {
    return new Map([...this.#switches].map(([machine, sw]) => [machine, sw.grpcAddress]));
  }

  /** The switches' process ids (those running). */
  get pids(): number[] {
    return [...this.#switches.values()].flatMap((sw) => (sw.pid === undefined ? [] : [sw.pid]));
  }

  /** simple_switch_CLI's errors while loading runtime_cli.txt ("machine: line"). */
  get cliErrors(): string[] {
    return [...this.#switches].flatMap(([machine, sw]) => sw.cliErrors.map((e) => `${machine}: ${e}`));
  }

  /** An input: onto its link (the receivers' ports), or from the member (port 255, packet_out). Throws for one
   * `refusal` names. */
  inject(i: Input): void {
    const inj = i.injection;
    if (inj.kind === "link") {
      const why = this.wiring.refusal(inj);
      if (why !== undefined) throw new Error(`an input the switches cannot take: ${why}`);
      this.#cross(inj.link, i.bytes);
    } else {
      this.#switches
        .get(this.wiring.machineOf(inj.member))
        ?.send(CPU_PORT, packetOut(this.wiring.memberNumber(inj.member), inj, i.bytes));
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#switches.values()].map((sw) => sw.stop()));
  }

  #departed(machine: string, port: number, bytes: Uint8Array): void {
    if (port === CPU_PORT) {
      const header = (MEMBER_BITS + LINK_BITS) / 8;
      const member = this.wiring.memberNamed(machine, bytes[0] ?? 0) ?? `machine ${machine} member ${bytes[0] ?? 0}`;
      this.departures({ kind: "delivered", member, bytes: bytes.slice(header) });
      return;
    }
    const d = this.wiring.departure(machine, port);
    if (d === undefined) {
      this.departures({
        kind: "unexpected",
        what: `machine ${machine} port ${port}: ${Buffer.from(bytes).toString("hex")}`,
      });
      return;
    }
    this.#cross(d.link, bytes, d.onlyPeer);
  }

  /** A packet on link `li`: heard of, then passed to the receivers' switches. */
  #cross(li: number, bytes: Uint8Array, onlyPeer?: string): void {
    this.departures({ kind: "link", link: li, bytes });
    if (this.down.has(li)) return;
    for (const a of this.wiring.arrivals(li, onlyPeer)) {
      if (a === undefined) continue;
      if (this.relayed >= this.maxRelays) {
        this.bounded = true;
        return;
      }
      this.relayed++;
      this.#switches.get(a.machine)?.send(a.port, bytes);
    }
  }

  /** The link a packet went out on, by its qualified name (its recording's name). */
  linkName(li: number): string {
    return this.#compiled.links[li]?.qualified ?? "?";
  }
}
