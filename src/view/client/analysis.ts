// The analysis (--analysis): its properties, a reachability matrix per component, the loops and
// black holes it found, each path drawn on a click.

import type { AnalysisData, StepData } from "../page-data.js";
import { byId, data, el } from "./dom.js";
import { nodeEls, reveal } from "./drawing.js";
import { analysisPath, clearPath, markSteps } from "./path.js";

const analysisBox = byId("analysis");

function memberLabel(id: string): string {
  return data.nodes[id]?.member ?? id;
}

function propertyList(props: AnalysisData["properties"]): HTMLUListElement {
  const ul = el("ul", { class: "properties" });
  for (const p of props) {
    const li = el(
      "li",
      { class: p.holds ? "holds" : "fails" },
      `${p.holds ? "holds" : "FAILS"} ${p.name}${p.note === undefined ? "" : ` (${p.note})`}`,
    );
    for (const c of p.counterexamples) li.append(el("div", { class: "counterexample" }, c));
    if (p.more > 0) li.append(el("div", { class: "counterexample" }, `(+${p.more} more)`));
    ul.append(li);
  }
  return ul;
}

/** Draws a path the analysis found, as a packet's is drawn, and lists its rows. */
function showAnalysisPath(key: string, title: string, path: string, steps: readonly StepData[]): void {
  clearPath();
  for (const e of analysisBox.querySelectorAll(".chosen")) e.classList.remove("chosen");
  const visited = markSteps(steps);
  const ol = el("ol", { class: "steps", "aria-label": `steps of ${title}` });
  steps.forEach((s, k) => ol.append(el("li", { "data-step": String(k), "data-kind": s.step }, `  ${s.text}`)));
  analysisPath.append(el("h3", {}, title), ol, el("p", { class: "hint" }, path));
  reveal([...visited].flatMap((n) => nodeEls.get(n) ?? []));
  document.documentElement.dataset["shownAnalysis"] = key;
}

export function renderAnalysis(a: AnalysisData): void {
  const failing = [...a.components.flatMap((c) => c.properties), ...a.properties].filter((p) => !p.holds).length;
  const classes = Object.entries(a.classes)
    .map(([d, n]) => `${d} ${n}`)
    .join(", ");
  analysisBox.append(
    el("h2", {}, "Analysis"),
    el(
      "p",
      { class: "count" },
      `${failing === 0 ? "every property holds" : `${failing} properties fail`}; header classes: ${classes}` +
        `${a.cut === undefined ? "" : `; ${a.cut}`}`,
    ),
  );
  a.components.forEach((c, k) => analysisBox.append(...componentSection(c, k)));
  analysisBox.append(el("h3", {}, "the whole description"), propertyList(a.properties));
  analysisBox.append(
    el("h3", {}, a.findings.length === 0 ? "no loop, no black hole" : "loops and black holes"),
    findingList(a.findings),
    analysisPath,
  );
  // Keyboard: Tab to a cell or a finding, Enter draws its path.
  analysisBox.addEventListener("keydown", (e) => {
    const t = e.target instanceof HTMLElement ? e.target : null;
    if ((e.key === "Enter" || e.key === " ") && t?.matches("td.has-path, #findings li") === true) {
      e.preventDefault();
      t.click();
    }
  });
  analysisBox.hidden = false;
}

type Component = AnalysisData["components"][number];

/** A network's, bridged set's or subduction group's properties, and its matrix of reachable pairs when not too big. */
function componentSection(c: Component, k: number): HTMLElement[] {
  const heading = el(
    "h3",
    { "data-component": String(k) },
    `${c.kind === "bridged" ? "bridged set" : c.kind} ${c.name}`,
  );
  const reach = el("p", { class: "count" }, `reachable: ${c.reachable.pairs} of ${c.reachable.of} member pairs`);
  if (c.classes.length === 0) {
    reach.append(
      ` (${c.members.length} members: too many for a matrix here; strata analyze --from --to asks of a pair)`,
    );
    return [heading, propertyList(c.properties), reach];
  }
  if (c.pathsCut !== "") reach.append(` — ${c.pathsCut}`);
  return [heading, propertyList(c.properties), reach, el("div", { class: "matrix-box" }, matrix(c))];
}

/** Header classes from each member to each other; a cell with a path found draws it when clicked. */
function matrix(c: Component): HTMLTableElement {
  const table = el("table", { class: "matrix", "data-component": c.name });
  const head = el("tr", {}, el("th", {}, "from \\ to"));
  for (const m of c.members) head.append(el("th", { scope: "col" }, memberLabel(m)));
  table.append(head);
  c.members.forEach((m0, i) => {
    const row = el("tr", {}, el("th", { scope: "row" }, memberLabel(m0)));
    c.members.forEach((m1, j) => {
      const n = c.classes[i]?.[j] ?? 0;
      const route = c.routes[`${i}.${j}`];
      const td = el(
        "td",
        {
          "data-cell": `${i}.${j}`,
          class: i === j ? "self" : n > 0 ? "reach" : "none",
          title: `${memberLabel(m0)} → ${memberLabel(m1)}: ${n} header class${n === 1 ? "" : "es"}`,
        },
        i === j ? "" : n > 0 ? String(n) : "·",
      );
      if (route !== undefined) {
        td.classList.add("has-path");
        td.setAttribute("tabindex", "0");
        td.addEventListener("click", () => {
          showAnalysisPath(
            `${c.name}:${i}.${j}`,
            `${memberLabel(m0)} → ${memberLabel(m1)}: ${route.header}`,
            route.path,
            route.steps,
          );
          td.classList.add("chosen");
        });
      }
      row.append(td);
    });
    table.append(row);
  });
  return table;
}

/** The loops and black holes, each drawing its path when clicked. */
function findingList(findings: AnalysisData["findings"]): HTMLOListElement {
  const list = el("ol", { id: "findings", "aria-label": "loops and black holes" });
  findings.forEach((f, k) => {
    const li = el(
      "li",
      { "data-finding": String(k), tabindex: "0", class: f.kind === "loop" ? "loop" : "hole" },
      `${f.kind} in ${f.component}: ${f.header} → ${f.at}`,
    );
    li.addEventListener("click", () => {
      showAnalysisPath(`finding ${k}`, `${f.kind}: ${f.header} → ${f.at}`, f.path, f.steps);
      li.classList.add("chosen");
    });
    list.append(li);
  });
  return list;
}
