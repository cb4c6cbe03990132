// A network's stated demands (`demands:` in the description: who must reach
// whom) as part of Network_satisfies_communication_demands (seed §3.4): the
// model's demands are what send rows attach and receive rows take; a stated
// demand `m0 → m1` asks that every header m0 sends itself addressed to m1 (m1's
// name as destination, any other field, the hop limit `send` gives, 64) is
// delivered to m1. Each pair is walked by ./explore.ts over the classes of that
// destination, so a counterexample comes with the path it took instead.

import { DEFAULT_HOP_LIMIT } from "../description/context.js";
import type { Analysis, Component } from "./analysis.js";
import { explore, type PathEvent } from "./explore.js";
import { NO_HOPS, oneHop } from "./hops.js";
import { Words } from "./words.js";

/** Steps one pair's walk may take: a path per class, each as long as the hop limit at most. */
const STEPS_PER_PAIR = 100_000;

export interface StatedDemands {
  /** Pairs stated. */
  readonly pairs: number;
  /** One line per pair not met. */
  readonly lines: readonly string[];
  /** Every pair was walked in full. */
  readonly complete: boolean;
}

/** The stated demands of the component's network, checked; undefined when it states none (or is a composition). */
export function statedDemands(a: Analysis, c: Component, w: Words = new Words(a)): StatedDemands | undefined {
  if (c.kind !== "network") return undefined;
  const net = a.compiled.networks.find((n) => n.name === c.networks[0]);
  const demands = net?.spec.intents?.demands ?? [];
  if (net === undefined || demands.length === 0) return undefined;
  const index = new Map(a.compiled.members.filter((m) => m.network === net.index).map((m) => [m.key, m.index]));
  const design = c.space.design;
  const hops = design.hopLimitField === undefined ? NO_HOPS : oneHop(DEFAULT_HOP_LIMIT);
  const lines: string[] = [];
  let complete = true;
  a.budget.stage(`checking the demands of network ${net.name}`, demands.length, "pairs");
  for (const d of demands) {
    const m0 = index.get(d.from);
    const m1 = index.get(d.to);
    if (m0 === undefined || m1 === undefined) continue;
    if (!a.budget.take()) return { pairs: demands.length, lines, complete: false };
    const to = a.member(m1).member.spec.nameValue;
    const atoms = c.space.classesWhere(new Map([[design.dstField, to]]));
    const delivered = new Set<number>();
    const ends = new Map<number, PathEvent>();
    const walked = explore(
      a,
      { kind: "self", member: m0 },
      { hopLimit: a.hopLimit, budget: STEPS_PER_PAIR, atoms, hops },
      (e) => {
        const atom = e.start[0]?.atom ?? -1;
        if (e.kind === "deliver" && e.member === m1) delivered.add(atom);
        else if (e.kind !== "cross" && e.kind !== "acquire" && !ends.has(atom)) ends.set(atom, e);
      },
    );
    complete &&= walked.complete;
    const missed = atoms.filter((x) => !delivered.has(x));
    const first = missed[0];
    if (first === undefined) continue;
    const end = ends.get(first);
    lines.push(
      `${w.member(m0)} must reach ${w.member(m1)} (${d.at.path}), but ${w.header(c.space, first, hops)} ` +
        `${end === undefined ? "is sent on no link" : endText(w, end)}` +
        (missed.length > 1 ? ` (and ${missed.length - 1} more header classes)` : ""),
    );
  }
  return { pairs: demands.length, lines, complete };
}

/** What the property was checked over, when demands are stated. */
export function demandsNote(stated: StatedDemands | undefined, sessions: number): string | undefined {
  return stated === undefined ? undefined : `${stated.pairs} stated pairs${sessions > 0 ? " and the send rows" : ""}`;
}

function endText(w: Words, e: PathEvent): string {
  const path = w.path(e.path);
  if (e.kind === "drop") return `is dropped at ${w.member(e.member)} (${e.reason ?? "?"}): ${path}`;
  if (e.kind === "exit") return `leaves on ${w.link(e.link)}: ${path}`;
  if (e.kind === "loop") return `loops back to ${w.link(e.link)}: ${path}`;
  return `is delivered to ${w.member(e.member)} instead: ${path}`;
}
