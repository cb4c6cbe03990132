// What `strata view --analysis` puts in the page: `strata analyze`'s report (./page-data.ts
// AnalysisData) — per component the reachability matrix member × member with the number of
// header classes that go, its properties, and the loops and black holes with their paths as
// steps the page can draw the way it draws a packet's.

import type { CompiledSpec } from "../control/compiled.js";
import { Analysis } from "../analysis/analysis.js";
import { ANALYZE_LIMITS, Budget, orCut, type Stop } from "../analysis/budget.js";
import { computeRelations, report } from "../analysis/properties.js";
import { holeAt, largest } from "../analysis/queries.js";
import { explore } from "../analysis/explore.js";
import type { Step } from "../analysis/walk.js";
import { Words } from "../analysis/words.js";
import { intentText } from "../intents/provenance.js";
import { memberNode } from "./graph.js";
import type { AnalysisData, FindingData, RouteData, StepData } from "./page-data.js";

/** Components up to this many members get a matrix on the page (n² cells); larger ones their reachable pair count. */
export const MATRIX_MAX = 200;
/** Components up to this many members get a path per reachable matrix cell (one walk from each member). */
export const CELL_PATHS_MAX = 64;
/** Links a cell's path may cross (strata analyze --hop-limit's default). */
const HOP_LIMIT = 64;
/**
 * Steps the search for a member's example paths may take: the matrix comes from the relations, and
 * a cell's path is an example, which a search cut short may leave out.
 */
export const CELL_SEARCH_STEPS = 200_000;

/**
 * The page's analysis, within `budget` (strata analyze's when none is given); `cellSearchSteps` bounds each member's
 * search for example paths. Cut short, it says so (`cut`), with what it found; work that cannot stop half-way and
 * passes the budget leaves only that line and the classes made.
 */
export function analysisData(
  compiled: CompiledSpec,
  cellSearchSteps = CELL_SEARCH_STEPS,
  budget = new Budget(ANALYZE_LIMITS),
): AnalysisData {
  const a = new Analysis(compiled, { budget });
  const data = orCut(
    budget,
    () => found(a, cellSearchSteps),
    (): AnalysisData => ({ ok: false, classes: classesOf(a), components: [], properties: [], findings: [] }),
  );
  const stop = budget.stopped;
  return stop === undefined ? data : { ...data, ok: false, cut: cutText(stop) };
}

/** What a stopped analysis could not tell, as `strata serve --analyze`'s line says it. */
function cutText(stop: Stop): string {
  const far = stop.total > 0 ? ` (${stop.done} of ${stop.total} ${stop.unit})` : "";
  return `cut short by its ${stop.limit} limit while ${stop.stage}${far}: what is shown is what it found`;
}

function classesOf(a: Analysis): Record<string, number> {
  return Object.fromEntries(a.spaces.all().map((s) => [s.design.name, s.built ? s.atoms().length : s.made]));
}

function found(a: Analysis, cellSearchSteps: number): AnalysisData {
  const compiled = a.compiled;
  const r = computeRelations(a);
  const rep = report(a, r);
  const w = new Words(a);
  const steps = (path: readonly Step[]): StepData[] => path.map((s) => stepData(compiled, w, s));
  const components = a.components.map((c, k) => {
    const rel = r.relation.get(c);
    const routes: Record<string, RouteData> = {};
    /** Members whose search for example paths stopped at cellSearchSteps. */
    const cut: string[] = [];
    if (c.members.length <= CELL_PATHS_MAX) {
      const local = new Map(c.members.map((m, j) => [m, j]));
      c.members.forEach((m0, i) => {
        const options = { hopLimit: HOP_LIMIT, kinds: new Set(["acquire"] as const), budget: cellSearchSteps };
        const searched = explore(a, { kind: "self", member: m0 }, options, (e) => {
          const j = local.get(e.member);
          if (j === undefined || j === i || routes[`${i}.${j}`] !== undefined) return;
          routes[`${i}.${j}`] = { header: w.start(e.start), path: w.path(e.path), steps: steps(e.path) };
        });
        if (!searched.complete) cut.push(w.member(m0));
      });
    }
    return {
      kind: c.kind,
      name: c.name,
      members: c.members.map(memberNode),
      classes:
        c.members.length > MATRIX_MAX
          ? []
          : c.members.map((m0) => c.members.map((m1) => rel?.classesBetween(m0, m1) ?? 0)),
      reachable: { pairs: rel?.pairs.reached ?? 0, of: rel?.pairs.all ?? 0 },
      properties: rep.components[k]?.properties ?? [],
      routes,
      pathsCut:
        cut.length === 0
          ? ""
          : `the search for example paths from ${cut.join(", ")} stopped after ` +
            `${cellSearchSteps.toLocaleString("en")} steps: a reachable cell in their rows may have none ` +
            "(strata analyze --from --to finds one)",
    };
  });
  const findings: FindingData[] = [];
  for (const c of largest(a)) {
    const rel = r.relation.get(c);
    for (const l of rel?.loops() ?? [])
      findings.push({
        kind: "loop",
        component: c.name,
        header: w.header(c.space, l.atom, l.hops),
        at: `${w.link(l.link)}${l.bounded ? " (until the TTL runs out)" : ""}`,
        path: w.path(l.path),
        steps: steps(l.path),
      });
    const seen = new Set<string>();
    for (const h of rel?.holes() ?? []) {
      const key = `${h.hole.member}/${h.hole.table}/${String(h.hole.link)}/${h.atom}`;
      if (seen.has(key)) continue;
      seen.add(key);
      findings.push({
        kind: "black hole",
        component: c.name,
        header: w.header(c.space, h.atom, h.hole.hops),
        at: holeAt(w, h.hole.member, h.hole.table, h.hole.link),
        path: w.path(h.path),
        steps: steps(h.path),
      });
    }
  }
  return {
    ok: rep.ok,
    classes: rep.classes,
    components,
    properties: [rep.layering, ...rep.inclusions],
    findings,
  };
}

function stepData(compiled: CompiledSpec, w: Words, s: Step): StepData {
  if (s.kind === "link") {
    const link = compiled.links[s.link];
    const sender = link === undefined || link.sender < 0 ? [] : [memberNode(link.sender)];
    return { copy: 0, step: "link", text: w.step(s), nodes: sender, link: w.link(s.link) };
  }
  // A row an intent made says which, as strata trace says it beside the row.
  const table = s.kind === "row" ? compiled.members[s.member]?.tables[s.role] : undefined;
  const intent = s.kind === "row" && table !== undefined ? intentText(table, s.row) : undefined;
  const text = intent === undefined ? w.step(s) : `${w.step(s)}  (${intent})`;
  return { copy: 0, step: s.kind === "miss" ? "drop" : "row", text, nodes: [memberNode(s.member)] };
}
