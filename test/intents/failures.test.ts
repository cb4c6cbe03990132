// Routes after failures ("Checked, not asserted"): random connected topologies
// of routers, each with a host, and random link failures taken down one after
// another on a running engine (Engine.setDown, which recomputes the routes and
// writes the rows that changed). After each failure:
//
// - the analysis of the installed rows, with the links down, finds no loop, and
//   the stated demands it finds unmet are exactly the pairs the remaining graph
//   cannot join (a breadth-first search here, over the links left);
// - the emulation agrees: a packet from each sampled host to another is
//   delivered exactly when the analysis says the pair is met.
//
// Then the links come back up one by one, checked the same way, and at the end the rows are those of a fresh load.
// Budgeted by work: RUNS topologies of at most 6 routers, at most 3 failures each.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { statedDemands } from "../../src/analysis/demands.js";
import { report } from "../../src/analysis/properties.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { ipv4Packet } from "../pipeline/helpers/packets.js";
import { batchOf } from "../pipeline/helpers/engine-run.js";

const RUNS = Number(process.env["STRATA_INTENTS_RUNS"] ?? 12);

interface Topology {
  readonly routers: number;
  /** Router pairs [a, b] (a < b), a spanning tree first, then extra links. */
  readonly links: readonly (readonly [number, number])[];
  readonly costs: readonly number[];
  /** Indices into links, taken down in this order. */
  readonly failures: readonly number[];
}

const topology: fc.Arbitrary<Topology> = fc.integer({ min: 2, max: 6 }).chain((routers) =>
  fc
    .record({
      tree: fc.tuple(...Array.from({ length: routers - 1 }, (_, i) => fc.integer({ min: 0, max: i }))),
      extra: fc.array(fc.tuple(fc.nat(routers - 1), fc.nat(routers - 1)), { maxLength: routers }),
      costs: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2 * routers, maxLength: 2 * routers }),
    })
    .chain(({ tree, extra, costs }) => {
      const seen = new Set<string>();
      const links: [number, number][] = [];
      const add = (a: number, b: number): void => {
        const [x, y] = a < b ? [a, b] : [b, a];
        if (x === y || seen.has(`${x}-${y}`)) return;
        seen.add(`${x}-${y}`);
        links.push([x, y]);
      };
      tree.forEach((parent, i) => add(parent, i + 1));
      for (const [a, b] of extra) add(a, b);
      return fc
        .uniqueArray(fc.nat(links.length - 1), { maxLength: Math.min(3, links.length) })
        .map((failures) => ({ routers, links, costs, failures }));
    }),
);

const ip = (n: number): string => `10.0.0.${n}`;
const linkName = (a: number, b: number): string => `r${a}-r${b}`;

/** Routers r0.. (10.0.0.1..) with hosts h0.. (10.0.0.101..), routes with the costs, every member to every member. */
function description(t: Topology): string {
  const members: Record<string, object> = {};
  const links: object[] = [];
  const ident = new Array<number>(t.routers).fill(1);
  const next = (r: number): number => {
    const i = ident[r] ?? 1;
    ident[r] = i + 1;
    return i;
  };
  for (let r = 0; r < t.routers; r++) {
    members[`r${r}`] = { name: ip(1 + r), role: "infra" };
    members[`h${r}`] = { name: ip(101 + r) };
    links.push({ from: `h${r}.1`, to: `r${r}.${next(r)}`, mode: "two-way" });
  }
  const costs: Record<string, number> = {};
  t.links.forEach(([a, b], i) => {
    links.push({ from: `r${a}.${next(a)}`, to: `r${b}.${next(b)}`, mode: "two-way", name: linkName(a, b) });
    costs[linkName(a, b)] = t.costs[i] ?? 1;
  });
  return JSON.stringify({
    networks: {
      ip: { header: "ipv4", ttl: "decrement", members, links, routes: { costs }, demands: [{ from: "*", to: "*" }] },
    },
  });
}

/** The member pairs the graph joins with these links up: a breadth-first search, routers relaying, hosts not. */
function joined(t: Topology, up: readonly (readonly [number, number])[]): Set<string> {
  const out = new Set<string>();
  for (let s = 0; s < t.routers; s++) {
    const seen = new Set([s]);
    const queue = [s];
    for (let x = queue.shift(); x !== undefined; x = queue.shift())
      for (const [a, b] of up) {
        const y = a === x ? b : b === x ? a : undefined;
        if (y !== undefined && !seen.has(y)) (seen.add(y), queue.push(y));
      }
    for (const r of seen)
      for (const [x, y] of [
        [`r${s}`, `r${r}`],
        [`r${s}`, `h${r}`],
        [`h${s}`, `r${r}`],
        [`h${s}`, `h${r}`],
      ] as const)
        if (x !== y) out.add(`${x}>${y}`);
  }
  return out;
}

/** Every ordered pair of distinct members. */
function allPairs(t: Topology): string[] {
  const keys = Array.from({ length: t.routers }, (_, r) => [`r${r}`, `h${r}`]).flat();
  return keys.flatMap((a) => keys.filter((b) => b !== a).map((b) => `${a}>${b}`));
}

describe("routes after random link failures", () => {
  const title = `meet every demand the remaining graph can meet, never loop, the emulation agrees (${RUNS} topologies)`;
  it(title, () => {
    let failures = 0;
    fc.assert(
      fc.property(topology, (t) => {
        const compiled = compile(parseSpec(description(t), "random.yaml"));
        const hosts = Array.from({ length: t.routers }, (_, r) => `h${r}`);
        const engine = Engine.open({ compiled, endpoints: hosts.map((h) => `ip:${h}`) });
        const delivered: string[] = [];
        engine.connect({ deliveries: true });
        engine.onDeliver((member) => void delivered.push(engine.installed.compiled.members[member]?.key ?? "?"));
        try {
          const up = new Set(t.links.map((_, i) => i));
          // Down one after another, then up again in the same order: the state kept between changes both ways.
          const steps = [
            -1,
            ...t.failures.map((f) => ({ f, down: true })),
            ...t.failures.map((f) => ({ f, down: false })),
          ];
          for (const step of steps) {
            const l = typeof step === "number" ? undefined : t.links[step.f];
            if (l !== undefined && typeof step !== "number") {
              if (step.down) up.delete(step.f);
              else up.add(step.f);
              const w = engine.setDown({ link: `ip.${linkName(l[0], l[1])}` }, step.down);
              expect(w.rerouted).toBeDefined();
              failures++;
            }
            const now = engine.installed.compiled;
            const a = new Analysis(now, { down: engine.down });
            const c = a.components.find((x) => x.kind === "network");
            if (c === undefined) throw new Error("no network component");
            const loops = report(a).components[0]?.properties.find((p) => p.name === "No_routing_loops");
            expect(loops?.holds, loops?.counterexamples.join("\n")).toBe(true);
            const unmet = new Set(
              (statedDemands(a, c)?.lines ?? []).map((line) => {
                const m = /^ip\.(\w+) must reach ip\.(\w+) /.exec(line);
                return `${m?.[1]}>${m?.[2]}`;
              }),
            );
            const can = joined(
              t,
              [...up].map((i) => t.links[i] ?? [0, 0]),
            );
            expect(new Set(allPairs(t).filter((p) => !can.has(p)))).toEqual(unmet);
            // Each host sends to every other host: delivered exactly when the pair is met.
            const inputs = hosts.flatMap((_, s) =>
              hosts.map((_, d) => ({
                endpoint: s,
                bytes: ipv4Packet({ src: BigInt(0x0a000065 + s), dst: BigInt(0x0a000065 + d) }),
                origLen: 0,
                tsSec: 0,
                tsNsec: 0,
              })),
            );
            for (const p of inputs) (p as { origLen: number }).origLen = p.bytes.length;
            delivered.length = 0;
            engine.run(batchOf(inputs));
            const want = inputs.flatMap((_, k) => {
              const [s, d] = [Math.floor(k / hosts.length), k % hosts.length];
              return s !== d && can.has(`h${s}>h${d}`) ? [`h${d}`] : [];
            });
            expect(delivered.sort()).toEqual(want.sort());
          }
          // Everything up again: the rows are the ones a fresh load makes.
          const rows = (c: typeof compiled): string[] =>
            c.members.flatMap((m) => (m.tables.forward?.rows ?? []).map((r) => `${m.key} ${r.text}`));
          expect(rows(engine.installed.compiled)).toEqual(rows(compiled));
        } finally {
          engine.stop();
        }
      }),
      { numRuns: RUNS, seed: 3131 },
    );
    expect(failures).toBeGreaterThan(0);
  });
});
