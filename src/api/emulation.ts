// A description loaded and running in process: the engine `strata run` and
// `strata serve` use (src/engine/engine.ts), with packets injected a few at a
// time and what became of them told as events, and its tables read and written
// by member and role (./tables.ts). It is the first Device (./device.ts).
// replay() is `strata run`: the same front end (src/run/replay.ts), the same
// outputs, byte for byte.

import { EventEmitter } from "node:events";
import { compile } from "../control/compile.js";
import type { Resolved, Target } from "../control/targets.js";
import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import type { InputError } from "../errors.js";
import { loadSpec, parseSpec } from "../description/load.js";
import type { Spec } from "../description/types.js";
import { Engine } from "../engine/engine.js";
import type { Summary } from "../engine/summary.js";
import { Replay } from "../run/replay.js";
import { UsageError } from "../errors.js";
import { DROP_REASONS, type DropReason } from "../wasm/abi.js";
import { type Description, readDescription, type TableRole, toYaml } from "./description.js";
import type { Device, PacketIn, PacketOut } from "./device.js";
import { TableWriteError } from "./errors.js";
import { type RowWrite, TableBook, type TableEntry } from "./tables.js";

/** A packet delivered to a member (up its stack to its machine). */
export interface Delivery {
  /** "NETWORK:MEMBER". */
  readonly member: string;
  /** The member's link it came in on. */
  readonly inLink: number;
  readonly data: Uint8Array;
}

/** Packets dropped by a member (null: before any member took them, e.g. on a link that is down), for one reason. */
export interface Drop {
  readonly member: string | null;
  readonly reason: DropReason;
  readonly count: number;
}

/** A packet leaving the emulation on an external link ("NETWORK:EXTERNAL"). */
export interface Exit {
  readonly link: string;
  readonly data: Uint8Array;
}

/** What became of injected packets and their copies. */
export interface Outcome {
  readonly delivered: Delivery[];
  readonly dropped: Drop[];
  readonly exited: Exit[];
}

/** The events of an Emulation, each after the batch that made it. */
export interface EmulationEvents {
  deliver: [Delivery];
  drop: [Drop];
  exit: [Exit];
  /** A delivery to a member whose deliveries are packet-ins (EmulationOptions.packetIns). */
  packetIn: [PacketIn];
  /** Links taken down by setLink(). */
  linkDown: [LinkChange];
  /** Links brought back up by setLink(). */
  linkUp: [LinkChange];
  /** Members taken down by setMember(). */
  memberDown: [MemberChange];
  /** Members brought back up by setMember(). */
  memberUp: [MemberChange];
}

/** Members that went down or came up: each "NETWORK:MEMBER". */
export interface MemberChange {
  readonly members: readonly string[];
  readonly up: boolean;
}

/** Links that went down or came up: each named "NETWORK.NAME", as its recording links/NETWORK.NAME.pcap is. */
export interface LinkChange {
  readonly links: readonly string[];
  readonly up: boolean;
}

/** Where a controller hears of links going down and up: an Emulation, or whatever its caller tells it through. */
export interface LinkEvents {
  /** Calls `listener` for every change; returns the unsubscribe. */
  onLinkChange(listener: (change: LinkChange) => void): () => void;
  /** Calls `listener` for every member taken down or brought back (whose links carry nothing meanwhile), where the
   * source can tell; returns the unsubscribe. */
  onMemberChange?(listener: (change: MemberChange) => void): () => void;
}

/** A packet to inject: where it enters (an endpoint of `strata run --in`), its bytes, and its capture time. */
export interface Injected extends PacketOut {
  readonly time?: { readonly sec: number; readonly nsec: number };
}

export interface EmulationOptions {
  /** The name a description built in code goes by in messages (default "description"). */
  readonly name?: string;
  /** Start with every table empty: a controller writes the rows. */
  readonly emptyTables?: boolean;
  /** Members ("NETWORK:MEMBER") whose deliveries are packet-ins; default: every member's. */
  readonly packetIns?: readonly string[];
  readonly hopLimit?: number;
  readonly copyLimit?: number;
}

/** A description from a file, or built in code, read and checked: SpecError for what is wrong, naming the place. */
export function loaded(source: string | Description, name = "description"): { description: Description; spec: Spec } {
  if (typeof source === "string") return { description: readDescription(source), spec: loadSpec(source) };
  return { description: source, spec: parseSpec(toYaml(source), name) };
}

/** A description checked and compiled into tables and topology, as `strata check` and `strata run` do. */
export function compileDescription(source: string | Description, name?: string): CompiledSpec {
  return compile(loaded(source, name).spec);
}

const memberName = (c: CompiledSpec, index: number): string => {
  const m = c.members[index];
  return m === undefined ? "" : `${c.networks[m.network]?.name ?? ""}:${m.key}`;
};

export class Emulation extends EventEmitter<EmulationEvents> implements Device, LinkEvents {
  readonly description: Description;
  readonly #engine: Engine;
  readonly #book: TableBook;
  readonly #packetIns: ReadonlySet<number> | undefined;
  /** Per member + 1 (0: outside any), per reason: the drops told so far. */
  #dropsTold: number[][];
  /** Packets and copies whose fate was told so far (delivered, left, dropped). */
  #fates = 0;
  #outcome: Outcome | undefined;

  private constructor(source: string | Description, options: EmulationOptions) {
    super();
    const { description, spec } = loaded(source, options.name);
    this.description = description;
    const compiled = compile(spec);
    this.#engine = Engine.open({
      compiled,
      ...(options.emptyTables === true ? { emptyTables: true } : {}),
      ...(options.hopLimit !== undefined ? { hopLimit: options.hopLimit } : {}),
      ...(options.copyLimit !== undefined ? { copyLimit: options.copyLimit } : {}),
    });
    this.#engine.connect({ deliveries: true, exits: true });
    this.#book = new TableBook(this.#engine, description, spec.file, spec.allocation);
    this.#packetIns =
      options.packetIns === undefined ? undefined : new Set(options.packetIns.map((m) => this.#watched(m)));
    this.#dropsTold = compiled.members.map(() => []).concat([[]]);
    this.#engine.onDeliver((member, inLink, data, start, len) =>
      this.#delivered(member, inLink, data.slice(start, start + len)),
    );
    this.#engine.onExit((exit, data, start, len) => {
      const e = { link: exit.name, data: data.slice(start, start + len) };
      this.#outcome?.exited.push(e);
      this.emit("exit", e);
    });
  }

  /** Loads a description (a file, or one built in code) and installs it; SpecError for what is wrong with it. */
  static load(source: string | Description, options: EmulationOptions = {}): Emulation {
    return new Emulation(source, options);
  }

  /** The description as compiled: networks, members, links, tables with their rows. */
  get compiled(): CompiledSpec {
    return this.#engine.compiled;
  }

  /** Every member, "NETWORK:MEMBER". */
  get members(): string[] {
    return this.compiled.members.map((m) => memberName(this.compiled, m.index));
  }

  /** The index of a member whose deliveries are packet-ins; a RangeError (a bad option) for one that is not there. */
  #watched(name: string): number {
    try {
      return this.#book.member(name).index;
    } catch (err) {
      if (!(err instanceof TableWriteError)) throw err;
      this.#engine.stop();
      throw new RangeError(`packetIns: ${err.problem} (${err.fix})`);
    }
  }

  #delivered(member: number, inLink: number, data: Uint8Array): void {
    const d = { member: memberName(this.compiled, member), inLink, data };
    this.#outcome?.delivered.push(d);
    this.emit("deliver", d);
    if (this.#packetIns === undefined || this.#packetIns.has(member)) this.emit("packetIn", d);
  }

  /** Runs one packet through the data plane; resolves with what became of it and its copies. */
  inject(at: string, data: Uint8Array, time?: Injected["time"]): Promise<Outcome> {
    return this.injectMany([{ at, data, ...(time !== undefined ? { time } : {}) }]);
  }

  /** Runs packets through the data plane, in batches as a capture's; resolves with what became of them all. */
  injectMany(packets: readonly Injected[]): Promise<Outcome> {
    const engine = this.#engine;
    return engine.between(() => {
      const outcome: Outcome = { delivered: [], dropped: [], exited: [] };
      this.#outcome = outcome;
      try {
        for (const p of packets) {
          const endpoint = engine.endpointAt(resolveEndpoint(this.compiled, p.at), "api");
          engine.submit(endpoint, p.data, p.data.length, p.data.length, p.time?.sec, p.time?.nsec);
        }
        engine.flush();
      } finally {
        this.#outcome = undefined;
      }
      for (const d of this.#newDrops(outcome)) {
        outcome.dropped.push(d);
        this.emit("drop", d);
      }
      return outcome;
    });
  }

  /**
   * The data plane's drop counters since they were last read, as drops: read only when packets and copies outnumber
   * the deliveries and exits told (every packet and copy has one fate), each member's counters then.
   */
  #newDrops(outcome: Outcome): Drop[] {
    const packets = this.#engine.counters("packets");
    const entered = packets.injected + packets.copied;
    const fates = this.#fates + outcome.delivered.length + outcome.exited.length;
    this.#fates = entered;
    if (entered === fates) return [];
    const out: Drop[] = [];
    this.#engine.counters("drops").drops.forEach((reasons, i) => {
      const told = (this.#dropsTold[i] ??= []);
      reasons.forEach((n, r) => {
        const count = n - (told[r] ?? 0);
        told[r] = n;
        if (count > 0)
          out.push({
            member: i === 0 ? null : memberName(this.compiled, i - 1),
            reason: DROP_REASONS[r] ?? "none",
            count,
          });
      });
    });
    return out;
  }

  write(batch: readonly RowWrite[]): Promise<void> {
    return this.#engine.between(() => this.#book.write(batch));
  }

  read(member: string, table: TableRole): Promise<TableEntry[]> {
    return this.#engine.between(() => this.#book.read(member, table));
  }

  onPacketIn(listener: (p: PacketIn) => void): () => void {
    this.on("packetIn", listener);
    return () => void this.off("packetIn", listener);
  }

  async packetOut(packets: PacketOut | readonly PacketOut[]): Promise<void> {
    await this.injectMany(Array.isArray(packets) ? (packets as readonly PacketOut[]) : [packets as PacketOut]);
  }

  /**
   * Takes a link down (`up` false) or brings it back, as `strata serve`'s `down`/`up` do: `link` is "NETWORK:MEMBER.ID"
   * (the links on that member's link) or a link's name; packets sent on a link that is down are dropped. Resolves with
   * the links changed, told as a `linkDown` or `linkUp` event too; a RangeError for a link the description has not.
   * (Rows a description's `routes:` made go round it, as with `strata serve`; rows written through write() stay.)
   */
  setLink(link: string, up: boolean): Promise<LinkChange> {
    return this.#engine.between(() => {
      const change: LinkChange = { links: this.#setDown("setLink", { link }, up).links, up };
      this.emit(up ? "linkUp" : "linkDown", change);
      return change;
    });
  }

  /**
   * Takes a member down (`up` false) or brings it back, as `strata serve`'s `down member`/`up member` do: `member`
   * is "NETWORK:MEMBER"; what reaches a member that is down, or is sent by it, is dropped (`member-down`). Resolves
   * with the members changed, told as a `memberDown` or `memberUp` event too; a RangeError for a member the
   * description has not. (As with setLink, rows a description's `routes:` or `l2:` made go round it; rows written
   * through write() stay.)
   */
  setMember(member: string, up: boolean): Promise<MemberChange> {
    return this.#engine.between(() => {
      const members = this.#setDown("setMember", { member }, up).members.map((q) => {
        const m = this.compiled.members.find((x) => x.qualified === q);
        return m === undefined ? q : memberName(this.compiled, m.index);
      });
      const change: MemberChange = { members, up };
      this.emit(up ? "memberUp" : "memberDown", change);
      return change;
    });
  }

  /** The engine's setDown; a target it cannot find is a RangeError named for `method`. */
  #setDown(method: string, target: Target, up: boolean): Resolved {
    try {
      return this.#engine.setDown(target, !up);
    } catch (err) {
      if (err instanceof UsageError) throw new RangeError(`${method}: ${err.message}`);
      throw err;
    }
  }

  onLinkChange(listener: (change: LinkChange) => void): () => void {
    this.on("linkDown", listener);
    this.on("linkUp", listener);
    return () => {
      this.off("linkDown", listener);
      this.off("linkUp", listener);
    };
  }

  onMemberChange(listener: (change: MemberChange) => void): () => void {
    this.on("memberDown", listener);
    this.on("memberUp", listener);
    return () => {
      this.off("memberDown", listener);
      this.off("memberUp", listener);
    };
  }

  /** What ran so far, counted by the data plane: packets, links, deliveries, drops, and each description row's hits. */
  summary(): Promise<Summary> {
    return this.#engine.between(() => this.#engine.summary());
  }

  async close(): Promise<void> {
    this.#engine.stop();
    this.removeAllListeners();
  }
}

export interface ReplayOptions {
  /** Captures by endpoint, as `strata run --in ENDPOINT=FILE` (in this order). */
  readonly inputs: Readonly<Record<string, string>>;
  /** The output directory, as `--out` (refused as strata run refuses it). */
  readonly out: string;
  readonly force?: boolean;
  readonly trace?: boolean;
  /** A file of timed updates (docs/updates.md). */
  readonly updates?: string;
  readonly workers?: number;
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** The name a description built in code goes by (default "description"). */
  readonly name?: string;
}

export interface ReplayResult {
  /** What summary.json holds. */
  readonly summary: Summary;
  /** Inputs that bad input ended early (after their good packets). */
  readonly errors: readonly InputError[];
}

/** `strata run`: replays captures through a description and writes its outputs into `out`, as the command does. */
export function replay(source: string | Description, options: ReplayOptions): ReplayResult {
  const spec = loaded(source, options.name).spec;
  const prepared = Replay.prepare(
    {
      spec: spec.file,
      inputs: Object.entries(options.inputs).map(([endpoint, file]) => ({ endpoint, file })),
      out: options.out,
      ...(options.force !== undefined ? { force: options.force } : {}),
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
      ...(options.updates !== undefined ? { updates: options.updates } : {}),
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
      ...(options.hopLimit !== undefined ? { hopLimit: options.hopLimit } : {}),
      ...(options.copyLimit !== undefined ? { copyLimit: options.copyLimit } : {}),
    },
    compile(spec),
  );
  try {
    const { summary, errors } = prepared.run();
    return { summary, errors };
  } finally {
    prepared.close();
  }
}
