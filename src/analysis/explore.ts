// Where packets entering at one endpoint go, for every header class at once:
// the reference interpreter's walk (src/model/interpreter.ts: seed Figure 7,
// layering, subduction, bridging, replication) run on header classes instead
// of bytes. A packet is a stack of headers, outermost first, over a payload;
// each header is a class of its network's design and its hop-limit values.
// Sending in a session pushes the send row's header (one class, or several
// when a row matches the read-only fields a payload decides); receiving into
// an overlay pops it, and the header below — the overlay's packet pushed
// earlier, or, for what was injected, a header of the payload — goes on.
//
// Every path ends in a delivery, a drop (with the row or the table that did
// it), a crossing out of the network, or a loop (back where it was with the
// same classes). What the injected packet must look like for a path — its
// class at each header the path reads — is the path's start.
//
// The step at each table is ./step.ts's, the relation's walk's too; what is
// this walk's own is the packet's stack (a pop into an overlay, a session's
// push), a link crossed with its loop check, and the path kept for each event.

import type { DropReason, TableRole } from "../wasm/abi.js";
import type { Arrival } from "../model/rows.js";
import type { Analysis, MemberView } from "./analysis.js";
import { BudgetStop, isResourceError } from "./budget.js";
import type { HeaderSpace } from "./header-space.js";
import { undecrement } from "./hops.js";
import { sessionAt } from "./members.js";
import { type HoleTable, type RowDrop, type Step, Stepper, type ViaSession } from "./step.js";
import type { IndexedRow } from "./tables.js";

/** Where packets enter, as `strata run --in` says it (src/control/endpoints.ts). */
export type Start =
  | { readonly kind: "link"; readonly link: number }
  | { readonly kind: "self"; readonly member: number }
  | { readonly kind: "session"; readonly member: number; readonly session: number };

/** The injected packet's class at one header it carries (0: the outermost). */
export interface StartLevel {
  readonly space: HeaderSpace;
  readonly atom: number;
  readonly hops: bigint;
}

export type EventKind = "cross" | "acquire" | "deliver" | "drop" | "exit" | "loop";

/** Something a path does: crosses a link, is acquired or delivered, dropped, leaves the network, loops. */
export interface PathEvent {
  readonly kind: EventKind;
  /** The member (acquire, deliver, drop) or −1. */
  readonly member: number;
  /** The link crossed (cross, exit, loop) or −1. */
  readonly link: number;
  readonly reason?: DropReason;
  /** The row that dropped it (forward-drop, ttl-expired), as a step. */
  readonly row?: Step;
  /** What the injected packet must be for this (a header per level the path read; undefined: any payload). */
  readonly start: readonly (StartLevel | undefined)[];
  /** The class at the top of the stack when it happened. */
  readonly now: StartLevel | undefined;
  readonly path: readonly Step[];
  /** A send row pushed a header whose class depends on the payload (IPv4 ports of a port protocol): the path may or may
   * not be taken. */
  readonly approximate: boolean;
}

/**
 * What a concrete injected packet holds: the class of its header at level `designs.length − 1`,
 * read as the last design named, the levels above it read as the others — or "bad" (not a valid header).
 */
export type PayloadOracle = (
  designs: readonly string[],
  space: HeaderSpace,
) => { readonly atom: number; readonly hops: bigint } | "bad";

export interface ExploreOptions {
  /** Links a packet may cross; crossing one more is a loop (as the data plane's hop limit). */
  readonly hopLimit: number;
  /** The injected packet's headers below the first, when known (a concrete packet); else every class. */
  readonly payload?: PayloadOracle;
  /** Only these classes of the first header (default: all). */
  readonly atoms?: readonly number[];
  /** The first header's hop values (default: all). */
  readonly hops?: bigint;
  /** Only these kinds of events are made (default: all). */
  readonly kinds?: ReadonlySet<EventKind>;
  /**
   * The most steps (a link crossed, a row or a miss taken) the walk takes; past them it stops
   * (default: no bound). Paths multiply with every replication, and headers pushed in a loop of
   * sessions are new classes each time round, so a walk bounded only by the hop limit can be
   * longer than anyone would wait for.
   */
  readonly budget?: number;
}

/** How a walk ended: every path walked (`complete`), or stopped at its budget of steps or the analysis's. */
export interface Explored {
  readonly complete: boolean;
  /** Steps taken. */
  readonly steps: number;
}

/** Thrown through the walk when the listener has seen enough. */
class Enough extends Error {}

/** Thrown through the walk when it has taken its budget of steps. */
class OverBudget extends Error {}

/** A header of the packet: its class, and where its hop values came from. */
interface Level extends StartLevel {
  /** Which injected header it is (−1: pushed on the way). */
  readonly orig: number;
  /** Decrements since injection (to give the start's hop values). */
  readonly dec: number;
}

interface Pkt {
  /** Outermost first. */
  readonly stack: readonly Level[];
  /** Injected headers below the stack not read yet: how many have been read, or −1 when the payload is not the injected
   * one's. */
  readonly next: number;
  readonly start: readonly (StartLevel | undefined)[];
  readonly hops: number;
  readonly approximate: boolean;
}

/**
 * Walks every path from `start`, telling `emit` each event; `emit` returns false to stop. Says
 * whether it walked them all: not when it took `options.budget` steps first.
 */
export function explore(
  a: Analysis,
  start: Start,
  options: ExploreOptions,
  emit: (e: PathEvent) => boolean | void,
): Explored {
  const x = new Explorer(a, options, emit);
  try {
    x.run(start);
  } catch (err) {
    if (err instanceof OverBudget || err instanceof BudgetStop) return { complete: false, steps: x.steps };
    if (isResourceError(err)) {
      // The recursion follows the path, up to the hop limit: a stack that runs out first is a stop.
      a.budget.stopFor("depth");
      return { complete: false, steps: x.steps };
    }
    if (!(err instanceof Enough)) throw err;
  }
  return { complete: true, steps: x.steps };
}

/** The drop reason of a miss in each table (the data plane's). */
const MISS: Readonly<Record<HoleTable, DropReason>> = {
  acquire: "acquire-miss",
  forward: "forward-miss",
  receive: "receive-miss",
  transmit: "transmit-miss",
};

class Explorer extends Stepper<Pkt> {
  readonly #a: Analysis;
  readonly #o: ExploreOptions;
  readonly #emit: (e: PathEvent) => boolean | void;
  readonly #path: Step[] = [];
  /** States on the current path (a link crossed with these classes). */
  readonly #onPath = new Set<string>();
  readonly #budget: number;
  steps = 0;

  constructor(a: Analysis, options: ExploreOptions, emit: (e: PathEvent) => boolean | void) {
    super(a);
    this.#a = a;
    this.#o = options;
    this.#emit = emit;
    this.#budget = options.budget ?? Infinity;
  }

  run(start: Start): void {
    const t = this.#a.topology;
    if (start.kind === "session") {
      // A session's packet is payload: the send row attaches the header.
      return this.#send({ stack: [], next: 0, start: [], hops: 0, approximate: false }, start.member, start.session);
    }
    const space =
      start.kind === "link"
        ? this.#a.member(
            t.link(start.link).sender >= 0 ? t.link(start.link).sender : (t.link(start.link).receivers[0]?.member ?? 0),
          ).space
        : this.#a.member(start.member).space;
    const hops = this.#o.hops ?? space.allHops;
    for (const atom of this.#o.atoms ?? space.atoms()) {
      const level: Level = { space, atom, hops, orig: 0, dec: 0 };
      const p: Pkt = { stack: [level], next: 1, start: [{ space, atom, hops }], hops: 0, approximate: false };
      if (start.kind === "link") this.#cross(p, start.link, t.link(start.link).sender);
      else this.forward(p, start.member, "self");
    }
  }

  #event(kind: EventKind, p: Pkt, fields: { member?: number; link?: number; reason?: DropReason; row?: Step }): void {
    if (this.#o.kinds !== undefined && !this.#o.kinds.has(kind)) return;
    const top = p.stack[0];
    const go = this.#emit({
      kind,
      member: fields.member ?? -1,
      link: fields.link ?? -1,
      ...(fields.reason === undefined ? {} : { reason: fields.reason }),
      ...(fields.row === undefined ? {} : { row: fields.row }),
      start: p.start,
      now: top === undefined ? undefined : { space: top.space, atom: top.atom, hops: top.hops },
      path: [...this.#path],
      approximate: p.approximate,
    });
    if (go === false) throw new Enough();
  }

  #drop(p: Pkt, member: number, reason: DropReason, row?: Step): void {
    this.#event("drop", p, { member, reason, ...(row === undefined ? {} : { row }) });
  }

  /** The top header: the one the tables read. */
  #top(p: Pkt): Level {
    const top = p.stack[0];
    if (top === undefined) throw new Error("a header table looked at a packet without a header");
    return top;
  }

  protected atom(p: Pkt): number {
    return this.#top(p).atom;
  }

  protected hops(p: Pkt): bigint {
    return this.#top(p).hops;
  }

  /** The top header narrowed to `hops` (a row took only those values): the start narrows with it. */
  protected narrow(p: Pkt, hops: bigint): Pkt {
    const [top, ...rest] = p.stack;
    if (top === undefined || top.hops === hops) return p;
    const start =
      top.orig < 0
        ? p.start
        : p.start.map((s, i) => (i === top.orig && s !== undefined ? { ...s, hops: undecrement(hops, top.dec) } : s));
    return { ...p, stack: [{ ...top, hops }, ...rest], start };
  }

  /** The values that go on, one lower: the start is what they were before (one more decrement to undo). */
  protected decremented(p: Pkt, expired: bigint, next: bigint): Pkt {
    const q = this.narrow(p, this.hops(p) ^ expired);
    const [alive, ...rest] = q.stack;
    if (alive === undefined) return q;
    return { ...q, stack: [{ ...alive, hops: next, dec: alive.dec + 1 }, ...rest] };
  }

  /** A step taken (a link crossed, a row or a miss): counted against both budgets, and on the path until leave(). */
  #enter(s: Step): void {
    if (this.steps === this.#budget) throw new OverBudget();
    this.#a.budget.tick();
    this.steps++;
    this.#path.push(s);
  }

  protected enter(member: number, role: TableRole, row: number): void {
    this.#enter({ kind: "row", member, role, row });
  }

  protected leave(): void {
    this.#path.pop();
  }

  protected missed(p: Pkt, member: number, table: HoleTable, _arrival: Arrival, miss: bigint): void {
    this.#enter({ kind: "miss", member, role: table });
    this.#drop(this.narrow(p, miss), member, MISS[table]);
    this.leave();
  }

  /** Dropped, by the forward row `row` when there is one. */
  protected dropped(p: Pkt, member: number, reason: RowDrop, row: number): void {
    this.#drop(p, member, reason, row < 0 ? undefined : { kind: "row", member, role: "forward", row });
  }

  protected partner(member: number): number {
    return this.#a.topology.partner(member);
  }

  protected acquired(p: Pkt, member: number): void {
    this.#event("acquire", p, { member });
  }

  /** Delivered, or popped into an overlay (ExternalLink): what is below arrives at the overlay member on `ident`. */
  protected received(p: Pkt, member: number, row: IndexedRow): void {
    const a = row.row.action;
    if (a.kind === "deliver") return this.#event("deliver", p, { member });
    if (a.kind !== "link") return;
    const overlay = this.#a.member(this.#a.topology.attachment(a.network, member));
    for (const inner of this.#pop(p, overlay)) {
      if (inner === "bad") this.#drop(p, overlay.index, "bad-header");
      else this.acquire(inner, overlay.index, a.ident);
    }
  }

  /** Crosses the link; in a session (ExternalSession, seed §5.2.1), the underlay member on this machine sends it. */
  protected leaves(p: Pkt, member: number, link: number, via: ViaSession | undefined): void {
    if (via === undefined) return this.#cross(p, link, member);
    const sender = { member: this.#a.topology.attachment(via.network, member), session: via.session };
    if (link < 0) return this.#send(p, sender.member, sender.session);
    return this.#cross(p, link, member, sender);
  }

  #cross(p: Pkt, link: number, from: number, via?: { member: number; session: number }): void {
    const l = this.#a.topology.link(link);
    if (p.hops >= this.#o.hopLimit) return this.#drop(p, from, "loop");
    const key =
      `${link}|${via === undefined ? "" : `${via.member}@${via.session}`}|${p.next}|` +
      `${p.stack.map((s) => `${s.space.design.name}:${s.atom}:${s.hops}`).join(",")}`;
    if (this.#onPath.has(key)) return this.#event("loop", p, { link });
    this.#onPath.add(key);
    this.#enter({ kind: "link", link });
    this.#event("cross", p, { link });
    const q = { ...p, hops: p.hops + 1 };
    if (via !== undefined) {
      this.#send(q, via.member, via.session);
    } else if (l.receivers.length === 0) {
      this.#event("exit", q, { link });
    } else {
      // Allcast: every receiver; anycast: any one of them (what can happen, seed §4.3).
      for (const r of l.receivers) this.acquire(q, r.member, r.inLink);
    }
    this.leave();
    this.#onPath.delete(key);
  }

  /** The packet after its top header comes off, read as a header of the overlay's design: one per class it can be. */
  #pop(p: Pkt, overlay: MemberView): (Pkt | "bad")[] {
    const [, ...rest] = p.stack;
    const below = rest[0];
    const space = overlay.space;
    if (below !== undefined && below.space === space) return [{ ...p, stack: rest }];
    if (below !== undefined || p.next < 0) {
      // Another design's bytes read as this one (a session popped into the wrong overlay): the class is not known.
      return [
        ...space.atoms().map((atom) => ({
          ...p,
          stack: [{ space, atom, hops: space.allHops, orig: -1, dec: 0 }, ...rest],
          next: -1,
          approximate: true,
        })),
        "bad" as const,
      ];
    }
    // The injected packet's payload: its next header, read now.
    const level = p.next;
    const designs = [...p.start.slice(0, level).map((s) => s?.space.design.name ?? ""), space.design.name];
    const known = this.#o.payload?.(designs, space);
    const start = (atom: number, hops: bigint): (StartLevel | undefined)[] => {
      const s: (StartLevel | undefined)[] = [...p.start];
      s[level] = { space, atom, hops };
      return s;
    };
    const pkt = (atom: number, hops: bigint): Pkt => ({
      ...p,
      stack: [{ space, atom, hops, orig: level, dec: 0 }],
      next: level + 1,
      start: start(atom, hops),
    });
    if (known === "bad") return ["bad"];
    if (known !== undefined) return [pkt(known.atom, known.hops)];
    return [...space.atoms().map((atom) => pkt(atom, space.allHops)), "bad" as const];
  }

  /** The machine sends in a session: the send row's header goes on (seed Figure 4), then it is forwarded from self. */
  #send(p: Pkt, member: number, session: number): void {
    const v = this.#a.member(member);
    const s = sessionAt(v, session);
    if (s === undefined) {
      this.#enter({ kind: "miss", member, role: "send" });
      this.#drop(p, member, "send-miss");
      return this.leave();
    }
    this.#enter({ kind: "row", member, role: "send", row: s.row });
    // Read-only fields (IPv4 ports) come from the payload: a class for each they can be in.
    const { atoms, hops } = s;
    for (const atom of atoms) {
      const q: Pkt = {
        ...p,
        stack: [{ space: v.space, atom, hops, orig: -1, dec: 0 }, ...p.stack],
        approximate: p.approximate || atoms.length > 1,
      };
      this.forward(q, member, "self");
    }
    this.leave();
  }
}
