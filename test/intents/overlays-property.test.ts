// The overlays intent on random connected underlays (fast-check, fixed seed):
// whatever the underlay's shape, the overlay is fully meshed — the analysis says
// every mesh member reaches every other and every overlay link is implemented,
// and a replay delivers a packet between every ordered pair —, the identifiers
// are distinct and in the range, and a site added later leaves every existing
// link its identifier.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSpec } from "../../src/description/load.js";
import type { Spec } from "../../src/description/types.js";
import { analysed, KINDS, meshDescription, replayMesh, type Underlay } from "./helpers/overlays.js";

const RUNS = 6;

/** A connected underlay: routers joined by a random tree and a few extra links, each site on a random router. */
const underlay: fc.Arbitrary<Underlay> = fc
  .record({ routers: fc.integer({ min: 1, max: 4 }), sites: fc.integer({ min: 2, max: 5 }) })
  .chain(({ routers, sites }) =>
    fc
      .record({
        tree: fc.tuple(...Array.from({ length: routers - 1 }, (_, i) => fc.integer({ min: 0, max: i }))),
        extra: fc.array(fc.tuple(fc.nat(routers - 1), fc.nat(routers - 1)), { maxLength: routers }),
        at: fc.array(fc.nat(routers - 1), { minLength: sites + 1, maxLength: sites + 1 }),
      })
      .map(({ tree, extra, at }) => {
        const pairs = new Set<string>();
        const links: [string, string][] = [];
        const add = (a: string, b: string): void => {
          const k = [a, b].sort().join("-");
          if (a === b || pairs.has(k)) return;
          pairs.add(k);
          links.push([a, b]);
        };
        tree.forEach((p, i) => add(`r${i + 1}`, `r${p}`));
        for (const [a, b] of extra) add(`r${a}`, `r${b}`);
        at.forEach((r, s) => add(`s${s}`, `r${r}`));
        return { sites: sites + 1, routers, links };
      }),
  );

const ALL_HOLD = {
  Fully_reachable: true,
  No_routing_loops: true,
  Network_satisfies_communication_demands: true,
  Underlay_satisfies_layering_demands: true,
};

const idsOf = (spec: Spec): Map<string, number> =>
  new Map((spec.allocation?.overlays ?? []).map((o) => [o.link, o.id]));

describe("overlays on random connected underlays", () => {
  it.each(KINDS)(
    `$encapsulation: fully meshed (analysis and replay agree), ids distinct and stable (${RUNS} underlays)`,
    (kind) => {
      fc.assert(
        fc.property(underlay, (u) => {
          const all = Array.from({ length: u.sites }, (_, i) => `m${i}`);
          const ids = kind.encapsulation === "ip-in-ip" ? {} : { ids: "100..199" };
          // The last site's overlay member joins later (its underlay member is there from the start).
          const doc = meshDescription(kind, u, ids) as { networks: { o: { members: Record<string, unknown> } } };
          delete doc.networks.o.members[`m${u.sites - 1}`];
          const first = parseSpec(JSON.stringify(doc), "r.yaml");
          expect(analysed(first)).toEqual(ALL_HOLD);
          const { sent, got } = replayMesh(first, kind);
          expect(got).toEqual(sent);
          // The whole mesh, with the earlier allocation: every link that was there keeps its id.
          const second = parseSpec(JSON.stringify(meshDescription(kind, u, ids)), "r.yaml", {
            previous: first.allocation!,
          });
          expect(analysed(second)).toEqual({
            Fully_reachable: true,
            No_routing_loops: true,
            Network_satisfies_communication_demands: true,
            Underlay_satisfies_layering_demands: true,
          });
          const whole = replayMesh(second, kind);
          expect(whole.got).toEqual(whole.sent);
          if (kind.encapsulation === "ip-in-ip") return;
          const [before, after] = [idsOf(first), idsOf(second)];
          expect(after.size).toBe((all.length * (all.length - 1)) / 2);
          expect(new Set(after.values()).size).toBe(after.size);
          for (const id of after.values()) expect(id >= 100 && id <= 199).toBe(true);
          for (const [link, id] of before) expect(after.get(link), link).toBe(id);
        }),
        { numRuns: RUNS, seed: 31 },
      );
    },
  );
});
