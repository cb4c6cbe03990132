// A path on the drawing — a packet's, step by step, or one the analysis found — and the list of
// its steps beside it.

import type { StepData } from "../page-data.js";
import { showBytes } from "./bytes.js";
import { byId, el, svg } from "./dom.js";
import { linkEls, memberEls, nodeEls, reveal } from "./drawing.js";
import { fateLine, headerOf, numberOf, stepsOf, trace } from "./packets.js";

const pathBox = byId("path");
/** Where the analysis draws a path it found (./analysis.ts places it); cleared with a packet's path. */
export const analysisPath = el("div", { id: "analysis-path", "aria-live": "polite" });

let marked: Element[] = [];
export let current: { packet: number; steps: StepData[]; at: number } | undefined;
let now: Element[] = [];

export function clearPath(): void {
  for (const e of marked) e.classList.remove("hop", "dropped-here", "delivered-here");
  marked = [];
  for (const e of now) e.classList.remove("now");
  now = [];
  svg.classList.remove("tracing");
  current = undefined;
  pathBox.replaceChildren();
  analysisPath.replaceChildren();
  delete document.documentElement.dataset["shownPacket"];
  delete document.documentElement.dataset["shownAnalysis"];
}

function mark(e: Element | undefined, ...classes: string[]): void {
  if (e === undefined) return;
  e.classList.add(...classes);
  marked.push(e);
}

/** Marks the members and links of a path's steps on the drawing (a packet's, or one the analysis found); the nodes
 * visited. */
export function markSteps(steps: readonly StepData[]): Set<string> {
  const visited = new Set<string>();
  for (const s of steps) for (const n of s.nodes) visited.add(n);
  for (const n of visited) mark(nodeEls.get(n), "hop");
  for (const s of steps) {
    if (s.step === "drop") for (const n of s.nodes) mark(nodeEls.get(n), "dropped-here");
    if (s.step === "deliver") for (const n of s.nodes) mark(nodeEls.get(n), "delivered-here");
    if (s.link === undefined) continue;
    const g = linkEls.get(s.link);
    if (g === undefined) continue;
    mark(g, "hop");
    for (const seg of g.querySelectorAll<SVGPathElement>("path.seg")) {
      const to = seg.dataset["receiver"];
      if (to === undefined || visited.has(memberEls.get(to)?.dataset["node"] ?? "")) mark(seg, "hop");
    }
  }
  svg.classList.add("tracing");
  return visited;
}

export function drawPath(i: number): void {
  const p = trace;
  if (p === undefined) return;
  clearPath();
  const steps = stepsOf(p, i);
  const packet = numberOf(p, i);
  const visited = markSteps(steps);
  current = { packet, steps, at: -1 };

  const bytes = p.trace.bytes;
  const views = bytes?.steps[String(packet)];
  const ol = el("ol", { class: "steps", "aria-label": `steps of packet ${packet}` });
  ol.append(el("li", { class: "head" }, headerOf(p, i)));
  steps.forEach((s, k) => {
    const li = el(
      "li",
      { "data-step": String(k), "data-copy": String(s.copy), "data-kind": s.step },
      `  [${s.copy}] ${s.text}`,
    );
    if ((views?.[k] ?? -1) >= 0) li.classList.add("has-bytes");
    li.addEventListener("click", () => goToStep(k));
    ol.append(li);
  });
  ol.append(el("li", { class: "fate" }, `  → ${fateLine(p, i)}`));
  const note =
    bytes === undefined
      ? "The page holds no bytes of any hop (see the notes below)."
      : views === undefined
        ? `The page holds the bytes of packets ${bytes.packets} only: ` +
          `write it again with --bytes ${packet} for this one's.`
        : "Click a step marked ▸ (or move with ← →) for the packet's bytes there.";
  pathBox.append(el("h2", {}, `packet ${packet}`), ol, el("p", { class: "hint" }, note), el("div", { id: "decoded" }));
  reveal([...visited].flatMap((n) => nodeEls.get(n) ?? []));
  document.documentElement.dataset["shownPacket"] = String(packet);
}

export function goToStep(k: number): void {
  const c = current;
  if (c === undefined || c.steps.length === 0) return;
  c.at = Math.max(0, Math.min(c.steps.length - 1, k));
  for (const e of now) e.classList.remove("now");
  now = [];
  const s = c.steps[c.at] as StepData;
  for (const n of s.nodes) {
    const g = nodeEls.get(n);
    if (g !== undefined) now.push(g);
  }
  const link = s.link === undefined ? undefined : linkEls.get(s.link);
  if (link !== undefined) now.push(link);
  for (const e of now) e.classList.add("now");
  for (const li of pathBox.querySelectorAll("li[data-step]"))
    li.classList.toggle("current", li.getAttribute("data-step") === String(c.at));
  pathBox.querySelector(`li[data-step="${c.at}"]`)?.scrollIntoView({ block: "nearest" });
  showBytes(c.packet, c.at);
}
