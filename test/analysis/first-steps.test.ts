// The origins of a class walked on a dense leaf-spine (src/analysis/origin-groups.ts's FirstSteps): a leaf or spine
// whose first step for the class crosses only to acquisitions walked before (every leaf but one sends a class up to
// the same spines, every spine down to the same leaf) is told what they reached, not walked. At a5cdb54 every leaf
// and spine was walked a class, the hosts under a leaf once (origin groups): 8 spines, 32 leaves of 8 hosts: 74.3
// origins a class; 4 spines, 16 leaves of 16: 38.6. Now 38.0 and 21.7: the hosts under each leaf, and a few.

import { describe, expect, it, vi } from "vitest";
import { leafSpineSpec } from "../../bench/leaf-spine.js";
import { Analysis } from "../../src/analysis/analysis.js";
import { computeRelations } from "../../src/analysis/properties.js";
import { SharedWalk } from "../../src/analysis/shared-walk.js";
import { TEST_MS } from "../helpers/wait.js";
import { compileText } from "../pipeline/helpers/cases.js";

describe("the dense leaf-spine's origins walked a class", () => {
  const shapes = [
    { spines: 8, leaves: 32, hosts: 8, most: 40 },
    { spines: 4, leaves: 16, hosts: 16, most: 24 },
  ];
  it.each(shapes)(
    "$spines spines, $leaves leaves of $hosts hosts: at most $most origins walked a class, the pairs unchanged",
    (s) => {
      const c = compileText(leafSpineSpec(s));
      if (c === undefined) throw new Error("the leaf-spine does not compile");
      const a = new Analysis(c);
      // SharedWalk.origin: once an origin walked, and once a class (clear()).
      const origin = vi.spyOn(SharedWalk.prototype, "origin");
      const r = computeRelations(a);
      const calls = origin.mock.calls.length;
      origin.mockRestore();
      const classes = a.spaces.all().reduce((n, sp) => n + sp.atoms().length, 0);
      const [rel] = r.relation.values();
      // Every leaf and host reaches every other; a spine reaches every leaf and host, no other spine.
      const n = c.members.length;
      expect(rel?.pairs.reached).toBe(n * (n - 1) - s.spines * (s.spines - 1));
      expect(rel?.walked.classes).toBe(classes);
      expect((calls - classes) / classes).toBeLessThanOrEqual(s.most);
    },
    TEST_MS,
  );
});
