// The relation's walk that shares each member's acquisition between origins
// (Walker.reach, src/analysis/shared-walk.ts) against the walk from each
// origin apart (Walker.relation): per class, the same (origin, member) pairs,
// the same members reached from outside, and the same black holes, each with
// its hop values and the origin and path it is first met by. And what it is
// for: on a dense leaf-spine (every leaf routes every other leaf's prefix up to
// every spine, ECMP), the tables are looked up a bounded number of times per
// (class, member), not once per origin and path (20a61ac: 11.3 at 22 members,
// 19.6 at 76).

import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { leafSpineSpec } from "../../bench/leaf-spine.js";
import { Analysis } from "../../src/analysis/analysis.js";
import { Behaviours } from "../../src/analysis/behaviours.js";
import { Budget } from "../../src/analysis/budget.js";
import { PrefixTrie } from "../../src/analysis/prefix-trie.js";
import { originGroups } from "../../src/analysis/origin-groups.js";
import { computeRelations } from "../../src/analysis/properties.js";
import { SharedWalk } from "../../src/analysis/shared-walk.js";
import { TableIndex } from "../../src/analysis/tables.js";
import { type Hole, type Step, Walker } from "../../src/analysis/walk.js";
import { Topology } from "../../src/model/topology.js";
import { TEST_MS } from "../helpers/wait.js";
import { compileText, specRecipe, specRecipeOf, specText } from "../pipeline/helpers/cases.js";
import { composedRecipe, composedText } from "../pipeline/helpers/composed.js";
import { hub, ipInIp, leafSpine } from "./helpers/generate.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const RUNS = Number(process.env["STRATA_ANALYZE_RUNS"] ?? 10);

/** What one walk of a class meets: pairs "origin>member", and per black hole its hop values, first origin and path. */
interface Met {
  readonly pairs: Set<string>;
  readonly holes: Map<string, { hops: bigint; origin: number; path: readonly Step[] }>;
}

function met(): Met {
  return { pairs: new Set(), holes: new Map() };
}

function holeOf(m: Met): (origin: number, hole: Hole, path: () => Step[]) => void {
  return (origin, hole, path) => {
    const key = `${hole.member} ${hole.table} ${String(hole.link)}`;
    const was = m.holes.get(key);
    if (was === undefined) m.holes.set(key, { hops: hole.hops, origin, path: path() });
    else was.hops |= hole.hops;
  };
}

/** Where `once`, a shared walk, parts from `each`, the walk from each origin apart, at `at`. */
function parted(at: string, each: Met, once: Met): string[] {
  const lines: string[] = [];
  if ([...each.pairs].sort().join() !== [...once.pairs].sort().join()) lines.push(`${at}: pairs differ`);
  for (const [key, h] of each.holes) {
    const o = once.holes.get(key);
    if (o === undefined) lines.push(`${at}: hole ${key} missing`);
    else if (o.hops !== h.hops || o.origin !== h.origin || JSON.stringify(o.path) !== JSON.stringify(h.path))
      lines.push(`${at}: hole ${key} met otherwise`);
  }
  for (const key of once.holes.keys()) if (!each.holes.has(key)) lines.push(`${at}: hole ${key} only shared`);
  return lines;
}

/** Per component and class, where the shared walks, with the origins' groups and without, part from the walk from
 * each origin (none: []); and how many classes reach() walked. */
function compare(text: string): { lines: string[]; shared: number; classes: number } | undefined {
  const c = compileText(text);
  if (c === undefined) return undefined;
  const a = new Analysis(c, { budget: new Budget({ maxClasses: 1000, maxNodes: 1 << 20 }) });
  if (!a.built) return undefined;
  const lines: string[] = [];
  let shared = 0;
  let classes = 0;
  for (const comp of a.components) {
    const walker = new Walker(a);
    const groups = originGroups(a, (m, out) => walker.linkOut(m, out), comp);
    for (const atom of comp.space.atoms()) {
      classes++;
      const each = met();
      walker.relation(comp, atom, { acquired: (o, m) => each.pairs.add(`${o}>${m}`), hole: holeOf(each) });
      const once = met();
      const reached = (o: number, ms: Int32Array, n: number): void => {
        for (const m of ms.subarray(0, n)) once.pairs.add(`${o}>${m}`);
      };
      if (!walker.reach(comp, atom, { hole: holeOf(once) }, reached)) continue;
      shared++;
      lines.push(...parted(`${comp.name} class ${atom}`, each, once));
      const grouped = met();
      const told = (o: number, ms: Int32Array, n: number): void => {
        for (const m of ms.subarray(0, n)) grouped.pairs.add(`${o}>${m}`);
      };
      const alike = (os: Int32Array, from: number, ms: Int32Array, n: number): void =>
        os.subarray(from).forEach((o) => told(o, ms, n));
      const ok = walker.reach(comp, atom, { hole: holeOf(grouped) }, told, { groups, alike });
      if (!ok) lines.push(`${comp.name} class ${atom}: the grouped walk could not say`);
      else lines.push(...parted(`${comp.name} class ${atom}, origins grouped`, each, grouped));
    }
  }
  return { lines, shared, classes };
}

describe("the walk shared between origins = the walk from each origin", () => {
  const cases: { name: string; text: fc.Arbitrary<string> }[] = [
    { name: "random descriptions", text: specRecipe.map((r) => specText(r)) },
    {
      name: "random descriptions, tables of up to 10 rows",
      text: specRecipeOf(10)
        .map((r) => specText(r, 40))
        .filter((t) => compileText(t) !== undefined),
    },
    { name: "layered, subducted and bridged descriptions", text: composedRecipe.map((r) => composedText(r)) },
    {
      name: "dense leaf-spines",
      text: fc
        .record({ spines: fc.integer({ min: 1, max: 3 }), leaves: fc.integer({ min: 2, max: 4 }), hosts: fc.nat(3) })
        .map((s) => leafSpineSpec(s)),
    },
  ];
  it.each(cases)(
    "$name",
    ({ text }) => {
      let shared = 0;
      fc.assert(
        fc.property(text, (t) => {
          const d = compare(t);
          if (d === undefined) return;
          shared += d.shared;
          expect(d.lines, t).toEqual([]);
        }),
        { numRuns: RUNS },
      );
      expect(shared).toBeGreaterThan(0);
    },
    TEST_MS,
  );

  const files = [
    ...REPLAY_EXAMPLES.flatMap((d) =>
      readdirSync(`examples/${d}`)
        .filter((f) => f === "network.yaml" || f === "merged.yaml")
        .map((f) => `examples/${d}/${f}`),
    ),
    ...readdirSync("test/fixtures/analysis")
      // acl-34 and hub-300 take seconds to walk each origin apart.
      .filter((f) => f.endsWith(".yaml") && f !== "acl-34.yaml" && f !== "hub-300.yaml")
      .map((f) => `test/fixtures/analysis/${f}`),
  ];
  const texts: [string, () => string][] = [
    ...files.map((f): [string, () => string] => [f, () => readFileSync(f, "utf8")]),
    ["IP in IP, 5 deep", () => ipInIp(5)],
    ["a hub of 40 members", () => hub(40)],
    ["the Ethernet leaf-spine of 120 members (in-links named)", () => leafSpine(120)],
  ];
  it.each(texts)("%s", (_, text) => {
    const d = compare(text());
    expect(d).toBeDefined();
    expect(d?.lines).toEqual([]);
  });
});

describe("the dense leaf-spine's work", () => {
  // At 8fac5bc every host was an origin walked a class: 12.9 lookups a class per leaf and spine at 76 members, 17.2 at
  // 280. The hosts under a leaf are walked once a class, as one (src/analysis/origin-groups.ts): 8.5, 7.4.
  it.each([
    { spines: 4, leaves: 8, hosts: 8 },
    { spines: 8, leaves: 16, hosts: 16 },
  ])(
    "$spines spines, $leaves leaves of $hosts hosts: at most 10 lookups a class per leaf and spine, none per host",
    (s) => {
      const c = compileText(leafSpineSpec(s));
      if (c === undefined) throw new Error("the leaf-spine does not compile");
      const a = new Analysis(c);
      const lookup = vi.spyOn(TableIndex.prototype, "lookup");
      computeRelations(a);
      const lookups = lookup.mock.calls.length;
      lookup.mockRestore();
      const classes = a.spaces.all().reduce((n, sp) => n + sp.atoms().length, 0);
      expect(lookups / classes / (s.leaves + s.spines)).toBeLessThanOrEqual(10);
    },
    TEST_MS,
  );

  // Table lookups per (class, member) while the relations are computed: at 20a61ac every origin walked every path,
  // each ECMP choice again (22 members: 11.3 a class and member; 76 members: 19.6).
  const shapes = [
    { spines: 2, leaves: 4, hosts: 4, most: 4 },
    { spines: 4, leaves: 8, hosts: 8, most: 3 },
  ];
  it.each(shapes)(
    "$spines spines, $leaves leaves of $hosts hosts: at most $most lookups a class and member",
    (s) => {
      const c = compileText(leafSpineSpec(s));
      if (c === undefined) throw new Error("the leaf-spine does not compile");
      const a = new Analysis(c);
      const lookup = vi.spyOn(TableIndex.prototype, "lookup");
      const r = computeRelations(a);
      const lookups = lookup.mock.calls.length;
      lookup.mockRestore();
      const classes = a.spaces.all().reduce((n, sp) => n + sp.atoms().length, 0);
      const [rel] = r.relation.values();
      // Every leaf and host reaches every other; a spine reaches every leaf and host, no other spine.
      const n = c.members.length;
      expect(rel?.pairs.reached).toBe(n * (n - 1) - s.spines * (s.spines - 1));
      expect(lookups / (classes * n)).toBeLessThanOrEqual(s.most);
    },
    TEST_MS,
  );

  // At b466417 a trie's lookup followed the witness's bits down the trie at every lookup (4.3 a class and trie table at
  // 76 members, 4.0 at 280); every table's behaviours cut the classes, the spines' all alike, each but the first fate
  // marked: the class diagram grew with members times classes (424 nodes a class at 76 members, 645 at 280); and each
  // spine's acquisition was found again for every leaf's crossing of its anycast link (1.8 walks found again a class
  // and member at 76 members, 2.2 at 280), and the link of each member's out-link found again at every transmit.
  const grown = [
    { spines: 4, leaves: 8, hosts: 8 },
    { spines: 8, leaves: 16, hosts: 16 },
  ];
  it.each(grown)(
    "$spines spines, $leaves leaves of $hosts hosts: a trie followed once a class, the classes cut once by the " +
      "spines, at most 250 diagram nodes a class, the spines found together, each out-link's link found once",
    (s) => {
      const c = compileText(leafSpineSpec(s));
      if (c === undefined) throw new Error("the leaf-spine does not compile");
      const built = vi.spyOn(Behaviours.prototype, "buildFrom");
      const a = new Analysis(c);
      const cuts = built.mock.calls.length;
      built.mockRestore();
      const nodes = a.spaces.all().reduce((n, sp) => n + sp.bdd.size, 0);
      const along = vi.spyOn(PrefixTrie.prototype, "along");
      const again = vi.spyOn(SharedWalk.prototype, "again");
      const sends = vi.spyOn(Topology.prototype, "sends");
      computeRelations(a);
      const followed = along.mock.calls.length;
      const reused = again.mock.calls.length;
      const linksFound = sends.mock.calls.length;
      along.mockRestore();
      again.mockRestore();
      sends.mockRestore();
      const classes = a.spaces.all().reduce((n, sp) => n + sp.atoms().length, 0);
      // Every leaf's and spine's forward table is a trie; the spines' rows are all the same.
      expect(followed).toBeLessThanOrEqual(classes * (s.leaves + s.spines));
      expect(cuts).toBe(s.leaves + 1);
      expect(nodes / classes).toBeLessThanOrEqual(250);
      // A leaf's anycast link reaches the spines together: found once, not spine by spine.
      expect(reused / (classes * c.members.length)).toBeLessThanOrEqual(1.25);
      // The link a member sends on is found once, not once a class.
      expect(linksFound).toBeLessThanOrEqual(a.topology.links.length);
    },
    TEST_MS,
  );
});
