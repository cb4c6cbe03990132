// The step of the analysis's walks is written once (issue 29): which rows of a
// table match a class and what each row's action does are src/analysis/step.ts's,
// driven by both the relation's walk (walk.ts) and the walk across layers
// (explore.ts); a transmit row found by its out-link and a send row by its
// session (a keyed table's rows searched) are src/analysis/members.ts's, which
// the walks, the traffic model (traffic.ts) and the virtual links' costs
// (costs.ts) call. Code is read by
// TypeScript's parser (not comments or strings). The reference interpreter
// (src/model/) is not the analysis: a reference that checks code shares none of it.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const DIR = "src/analysis";

/** What a file does that only one file may do. */
type Deed = "searches a keyed table's rows" | "hands over to a shared member" | "decrements the hop limit";

/** Whether `e` is `….spec.rows` (a transmit or send table's rows, src/analysis/members.ts KeyedTable). */
function keyedRows(e: ts.Expression): boolean {
  return (
    ts.isPropertyAccessExpression(e) &&
    e.name.text === "rows" &&
    ts.isPropertyAccessExpression(e.expression) &&
    e.expression.name.text === "spec"
  );
}

/** The deeds of one source: a keyed table's rows searched (`t.spec.rows.find…`), a hand-over's action compared, a
 * call of decrement(). */
function deeds(source: string): Set<Deed> {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true);
  const out = new Set<Deed>();
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n)) {
      const callee = n.expression;
      if (
        ts.isPropertyAccessExpression(callee) &&
        /^find(Index)?$/.test(callee.name.text) &&
        keyedRows(callee.expression)
      )
        out.add("searches a keyed table's rows");
      if (ts.isIdentifier(callee) && callee.text === "decrement") out.add("decrements the hop limit");
    }
    if (ts.isStringLiteral(n) && (n.text === "shared-acquire" || n.text === "shared-forward")) {
      const p = n.parent;
      if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsEqualsEqualsToken)
        out.add("hands over to a shared member");
    }
    ts.forEachChild(n, visit);
  };
  visit(file);
  return out;
}

describe("the deed reader", () => {
  it.each<{ source: string; deeds: Deed[] }>([
    {
      source: "const i = t.spec.rows.findIndex((r, k) => r.out === outLink && t.active[k]);",
      deeds: ["searches a keyed table's rows"],
    },
    {
      source: "const row = u.send?.spec.rows.find((r) => session === r.session);",
      deeds: ["searches a keyed table's rows"],
    },
    { source: "if (a.kind === 'shared-forward') go(partner);", deeds: ["hands over to a shared member"] },
    { source: "const { next, expired } = decrement(top.hops);", deeds: ["decrements the hop limit"] },
    // Comments, strings and other calls are not deeds.
    {
      source: "// t.spec.rows.find((r) => r.out === 1)\nconst s = 'shared-acquire'; t.spec.rows.forEach(f);",
      deeds: [],
    },
    { source: "const d = undecrement(h, 2); const kinds = ['shared-acquire'];", deeds: [] },
  ])("$source", ({ source, deeds: expected }) => {
    expect([...deeds(source)]).toEqual(expected);
  });
});

describe("the analysis's step, written once", () => {
  const files = readdirSync(join(ROOT, DIR))
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => ({ file: `${DIR}/${f}`, deeds: deeds(readFileSync(join(ROOT, DIR, f), "utf8")) }));

  it.each<{ deed: Deed; owner: string }>([
    { deed: "searches a keyed table's rows", owner: "src/analysis/members.ts" },
    { deed: "hands over to a shared member", owner: "src/analysis/step.ts" },
    { deed: "decrements the hop limit", owner: "src/analysis/step.ts" },
  ])("$deed: only $owner", ({ deed, owner }) => {
    expect(files.filter((f) => f.deeds.has(deed)).map((f) => f.file)).toEqual([owner]);
  });
});
