/// <reference lib="dom.iterable" />
// The page's script (inlined by ./page.ts from its compiled form): moves and zooms the
// drawing, shows a member's or a link's details, and browses the packets of a replay —
// find them, list them, draw one's path across the layers step by step, and show its bytes
// at each hop. Everything it shows comes from the page's data (./page-data.ts), written
// from the run's own files; it computes nothing about packets itself.
//
// It runs in the browser: no imports but types, and nothing of Node.

import type { AnalysisData, ByteView, PageData, StepData, TraceData } from "./page-data.js";

declare const isoTimeNs: (sec: number, nsec: number) => string;

/** Rows of the packet list drawn at once; the rest are reached by narrowing the search or moving through it. */
const LIST_ROWS = 400;
const PACKET_FIELD_COUNT = 6;
const ZOOM_STEP = 1.25;

const data = await unpack(byId("strata-data").textContent ?? "");
const canvas = byId("canvas");
const svg = canvas.querySelector("svg") as SVGSVGElement;
const full = { x: 0, y: 0, w: svg.viewBox.baseVal.width, h: svg.viewBox.baseVal.height };
const view = { ...full };

/** The page's data: JSON, gzipped, in base64 (./page.ts packData). */
async function unpack(text: string): Promise<PageData> {
  const json = new Blob([decode64(text)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(json).text()) as PageData;
}

function byId(id: string): HTMLElement {
  return document.getElementById(id) as HTMLElement;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

// ── The drawing's elements, by the names traces use ────────────────────────

const nodeEls = new Map<string, SVGGElement>();
const memberEls = new Map<string, SVGGElement>();
for (const g of svg.querySelectorAll<SVGGElement>("g.node")) {
  const id = g.dataset["node"] ?? "";
  nodeEls.set(id, g);
  const member = g.dataset["member"];
  if (member !== undefined) memberEls.set(member, g);
  g.setAttribute("tabindex", "0");
}
const linkEls = new Map<string, SVGGElement>();
for (const g of svg.querySelectorAll<SVGGElement>("g.link")) {
  linkEls.set(g.dataset["link"] ?? "", g);
  g.setAttribute("tabindex", "0");
}

// ── Moving and zooming: the SVG's viewBox ────────────────────────────────

function applyView(): void {
  svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
}

/** The most a fitted drawing is magnified: a small description stays at a readable size, not a poster. */
const FIT_MAX_SCALE = 1.5;

function fit(): void {
  const r = canvas.getBoundingClientRect();
  const scale = Math.min(r.width / full.w, r.height / full.h);
  const k = scale > FIT_MAX_SCALE ? scale / FIT_MAX_SCALE : 1;
  const w = full.w * k;
  const h = full.h * k;
  Object.assign(view, { x: full.x - (w - full.w) / 2, y: full.y - (h - full.h) / 2, w, h });
  applyView();
}

/** Zooms by `factor` (> 1 in) about a point of the drawing (its centre by default). */
function zoom(factor: number, cx = view.x + view.w / 2, cy = view.y + view.h / 2): void {
  const w = Math.min(full.w * 4, Math.max(40, view.w / factor));
  const h = (view.h * w) / view.w;
  view.x = cx - ((cx - view.x) * w) / view.w;
  view.y = cy - ((cy - view.y) * h) / view.h;
  view.w = w;
  view.h = h;
  applyView();
}

/** Drawing units per screen pixel (the viewBox is fitted into the canvas, aspect kept). */
function unitsPerPixel(): number {
  const r = canvas.getBoundingClientRect();
  return Math.max(view.w / Math.max(1, r.width), view.h / Math.max(1, r.height));
}

function toDrawing(clientX: number, clientY: number): { x: number; y: number } {
  const p = svg.createSVGPoint();
  p.x = clientX;
  p.y = clientY;
  const m = svg.getScreenCTM();
  return m === null ? { x: 0, y: 0 } : p.matrixTransform(m.inverse());
}

/** A node's box in the drawing: its group's translation and its shape's size. */
function boxOf(g: SVGGElement): { x: number; y: number; w: number; h: number } {
  const m = g.transform.baseVal.consolidate()?.matrix;
  const b = g.getBBox();
  return { x: (m?.e ?? 0) + b.x, y: (m?.f ?? 0) + b.y, w: b.width, h: b.height };
}

/** Brings nodes into view, zooming in when the drawing is too small to read them. */
function reveal(nodes: readonly SVGGElement[]): void {
  if (nodes.length === 0) return;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const g of nodes) {
    const b = boxOf(g);
    [x0, y0, x1, y1] = [Math.min(x0, b.x), Math.min(y0, b.y), Math.max(x1, b.x + b.w), Math.max(y1, b.y + b.h)];
  }
  const readable = unitsPerPixel() < 2.5;
  if (readable && x0 >= view.x && y0 >= view.y && x1 <= view.x + view.w && y1 <= view.y + view.h) return;
  // The nodes with a margin, at least as large as the canvas at one unit a pixel; the canvas's shape kept.
  const r = canvas.getBoundingClientRect();
  const pad = 60;
  let w = Math.max(x1 - x0 + 2 * pad, r.width);
  let h = Math.max(y1 - y0 + 2 * pad, r.height);
  if (w / h > r.width / Math.max(1, r.height)) h = (w * r.height) / Math.max(1, r.width);
  else w = (h * r.width) / Math.max(1, r.height);
  Object.assign(view, { x: (x0 + x1) / 2 - w / 2, y: (y0 + y1) / 2 - h / 2, w, h });
  applyView();
}

let drag: { x: number; y: number; vx: number; vy: number; moved: boolean } | undefined;
canvas.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
});
window.addEventListener("pointermove", (e) => {
  if (drag === undefined) return;
  const k = unitsPerPixel();
  const dx = e.clientX - drag.x;
  const dy = e.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < 4) return;
  drag.moved = true;
  canvas.classList.add("dragging");
  view.x = drag.vx - dx * k;
  view.y = drag.vy - dy * k;
  applyView();
});
window.addEventListener("pointerup", () => {
  canvas.classList.remove("dragging");
  // A drag is not a click: the click that follows it is ignored.
  if (drag?.moved === true) setTimeout(() => (drag = undefined), 0);
  else drag = undefined;
});
canvas.addEventListener(
  "wheel",
  (e) => {
    e.preventDefault();
    const p = toDrawing(e.clientX, e.clientY);
    zoom(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, p.x, p.y);
  },
  { passive: false },
);
for (const b of document.querySelectorAll<HTMLButtonElement>("[data-zoom]")) {
  b.addEventListener("click", () => {
    const how = b.dataset["zoom"];
    if (how === "in") zoom(ZOOM_STEP);
    else if (how === "out") zoom(1 / ZOOM_STEP);
    else fit();
  });
}
// Printed, the whole drawing at its own shape (the print style gives it the page's width); on screen again, fitted.
window.addEventListener("beforeprint", () => {
  Object.assign(view, full);
  applyView();
});
window.addEventListener("afterprint", fit);

// ── Details of a member or a link ────────────────────────────────────────

const details = byId("details");
let selected: Element | undefined;

function facts(pairs: readonly (readonly [string, string | Node])[]): HTMLDListElement {
  const dl = el("dl", { class: "facts" });
  for (const [k, v] of pairs) dl.append(el("dt", {}, k), el("dd", {}, v));
  return dl;
}

function select(g: SVGGElement | undefined): void {
  selected?.classList.remove("selected");
  selected = g;
  g?.classList.add("selected");
}

function showNode(id: string): void {
  const n = data.nodes[id];
  const g = nodeEls.get(id);
  if (n === undefined || g === undefined) return;
  select(g);
  details.replaceChildren();
  if (n.kind !== "member") {
    details.append(
      el("h2", {}, n.kind === "external" ? `external end ${n.label}` : `group ${n.label}`),
      facts([["network", n.network]]),
    );
    return;
  }
  const member = n.member ?? "";
  const sameMachine = Object.values(data.nodes).filter(
    (o) => o.kind === "member" && o.machine === n.machine && o.member !== member,
  );
  details.append(
    el("h2", {}, member),
    facts([
      ["network", `${n.network} (${data.networks.find((w) => w.name === n.network)?.design ?? ""})`],
      ["name", n.name ?? ""],
      ["role", n.role ?? ""],
      [
        "machine",
        `${n.machine ?? ""}${sameMachine.length === 0 ? "" : `, with ${sameMachine.map((o) => o.member).join(", ")}`}`,
      ],
    ]),
  );
  const run = data.run;
  if (run === undefined) return;
  const got = run.members[member];
  const drops = Object.entries(got?.drops ?? {});
  details.append(
    facts([
      ["delivered", String(got?.delivered ?? 0)],
      ["dropped", drops.length === 0 ? "0" : drops.map(([reason, n]) => `${n} ${reason}`).join(", ")],
    ]),
  );
  const rows = run.rows.filter((r) => r.member === member);
  if (rows.length > 0) {
    const table = el("table", { class: "rows" });
    for (const r of rows)
      table.append(
        el(
          "tr",
          {},
          el("td", {}, r.table),
          el("td", {}, `row ${r.row}`),
          el("td", {}, r.rule),
          el("td", {}, `${r.hits} hits`),
        ),
      );
    details.append(el("h2", {}, "rows that matched"), table);
  }
  if (trace !== undefined) {
    const find = el("button", { type: "button" }, `find packets at ${member}`);
    find.addEventListener("click", () => search(`at ${member}`));
    details.append(find);
  }
}

function showLink(capture: string): void {
  const l = data.links[capture];
  const g = linkEls.get(capture);
  if (l === undefined || g === undefined) return;
  select(g);
  const how = [
    l.kind === "virtual" ? `virtual: implemented by session ${l.sessions.join(", ")}` : l.kind,
    ...(l.bridging ? ["bridging two networks"] : []),
    ...(l.shared !== undefined ? [`shared with ${l.shared} (subduction)`] : []),
  ].join("; ");
  details.replaceChildren(
    el("h2", {}, capture),
    facts([
      ["network", l.network],
      ["mode", `${l.mode}${l.group === undefined ? "" : `, group ${l.group}`}`],
      ["kind", how],
      ...(l.external !== undefined ? [["external end", l.external] as const] : []),
    ]),
  );
  const run = data.run;
  if (run === undefined) return;
  const got = run.links[capture];
  details.append(
    facts([
      [
        "carried",
        got === undefined ? "nothing" : `${got.packets} packets, ${got.bytes} bytes (${run.dir}/links/${capture}.pcap)`,
      ],
    ]),
  );
  if (trace !== undefined) {
    const find = el("button", { type: "button" }, `find packets via ${capture}`);
    find.addEventListener("click", () => search(`via ${capture}`));
    details.append(find);
  }
}

function activate(target: EventTarget | null): boolean {
  const t = target instanceof Element ? target : null;
  const node = t?.closest<SVGGElement>("g.node");
  if (node != null) {
    showNode(node.dataset["node"] ?? "");
    return true;
  }
  const link = t?.closest<SVGGElement>("g.link");
  if (link != null) {
    showLink(link.dataset["link"] ?? "");
    return true;
  }
  return false;
}

svg.addEventListener("click", (e) => {
  if (drag?.moved === true) return;
  if (!activate(e.target)) {
    select(undefined);
  }
});
svg.addEventListener("keydown", (e) => {
  if (e.key === "Enter" || e.key === " ") {
    if (activate(e.target)) e.preventDefault();
  }
});

// ── The packets of the run ───────────────────────────────────────────────

function decode64(text: string): ArrayBuffer {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}

interface Packets {
  readonly trace: TraceData;
  readonly fields: Uint32Array;
  readonly seconds: Float64Array;
  readonly paths: Uint16Array | Uint32Array;
  readonly starts: Uint32Array;
  /** Packet number → its place in the trace. */
  readonly place: Map<number, number>;
}

const trace: Packets | undefined = (() => {
  const t = data.run?.trace;
  if (t === undefined) return undefined;
  const fields = new Uint32Array(decode64(t.packets));
  const place = new Map<number, number>();
  for (let i = 0; i < t.count; i++) place.set(fields[i * PACKET_FIELD_COUNT] ?? 0, i);
  return {
    trace: t,
    fields,
    seconds: new Float64Array(decode64(t.seconds)),
    paths: t.wide ? new Uint32Array(decode64(t.paths)) : new Uint16Array(decode64(t.paths)),
    starts: new Uint32Array(decode64(t.pathStarts)),
    place,
  };
})();

const field = (p: Packets, i: number, k: number): number => p.fields[i * PACKET_FIELD_COUNT + k] ?? 0;
const numberOf = (p: Packets, i: number): number => field(p, i, 0);

function stepsOf(p: Packets, i: number): StepData[] {
  const path = field(p, i, 2);
  const out: StepData[] = [];
  for (let k = p.starts[path] ?? 0; k < (p.starts[path + 1] ?? 0); k++)
    out.push(p.trace.steps[p.paths[k] ?? 0] as StepData);
  return out;
}

function fatesOf(p: Packets, i: number): string[] {
  return (p.trace.fateSets[field(p, i, 4)] ?? []).map((f) => p.trace.fates[f] ?? "");
}

function headerOf(p: Packets, i: number): string {
  const endpoint = p.trace.endpoints[field(p, i, 1)] ?? "";
  const time = isoTimeNs(p.seconds[i] ?? 0, field(p, i, 5));
  return `packet ${numberOf(p, i)}  ${endpoint}  ${time}  ${field(p, i, 3)} bytes`;
}

function fateLine(p: Packets, i: number): string {
  const f = fatesOf(p, i);
  const cut = p.trace.cut[String(numberOf(p, i))] ?? 0;
  const more = cut > 0 ? `; ${cut} more steps not kept (the line reached 64 MiB)` : "";
  return `${f.length === 0 ? "(no end recorded)" : f.join("; ")}${more}`;
}

// A search: clauses joined by "and", each a test of a packet (its place in the trace).
type Test = (i: number) => boolean;

const member = (text: string): string => text.replace(/^([^:.\s]+):/, "$1.");

function clause(p: Packets, text: string): Test | string {
  const t = text.trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\d+)(?:\s*-\s*(\d+)?)?$/.exec(t)) !== null) {
    const first = Number(m[1]);
    const last = m[2] !== undefined ? Number(m[2]) : t.includes("-") ? Infinity : first;
    return (i) => numberOf(p, i) >= first && numberOf(p, i) <= last;
  }
  const fateTest = (match: (fate: string) => boolean): Test => {
    const sets = p.trace.fateSets.map((s) => s.some((f) => match(p.trace.fates[f] ?? "")));
    return (i) => sets[field(p, i, 4)] === true;
  };
  if ((m = /^delivered(?:\s+to\s+(\S+))?$/.exec(t)) !== null) {
    const who = m[1] === undefined ? undefined : member(m[1]);
    return fateTest((f) => (who === undefined ? f.startsWith("delivered to ") : f === `delivered to ${who}`));
  }
  if ((m = /^dropped(?:\s+at\s+(\S+))?(?:\s+\(?([a-z-]+)\)?)?$/.exec(t)) !== null) {
    const who = m[1] === undefined ? undefined : member(m[1]);
    const reason = m[2];
    return fateTest(
      (f) =>
        f.startsWith(`dropped at ${who ?? ""}`) &&
        (who === undefined || f.startsWith(`dropped at ${who} (`)) &&
        (reason === undefined || f.endsWith(`(${reason})`)),
    );
  }
  if ((m = /^left(?:\s+on\s+(\S+))?$/.exec(t)) !== null) {
    const link = m[1];
    return fateTest((f) => (link === undefined ? f.startsWith("left on ") : f === `left on ${link}`));
  }
  if ((m = /^(via|at)\s+(\S+)$/.exec(t)) !== null) {
    const what = m[1] === "via" ? (m[2] ?? "") : member(m[2] ?? "");
    const node = m[1] === "at" ? memberEls.get(what)?.dataset["node"] : undefined;
    if (m[1] === "via" && data.links[what] === undefined) return `no link ${what}`;
    if (m[1] === "at" && node === undefined) return `no member ${what}`;
    const stepHits = p.trace.steps.map((s) =>
      m?.[1] === "via" ? s.step === "link" && s.link === what : s.nodes.includes(node ?? ""),
    );
    const pathHits = new Uint8Array(p.starts.length);
    for (let path = 0; path + 1 < p.starts.length; path++) {
      for (let k = p.starts[path] ?? 0; k < (p.starts[path + 1] ?? 0); k++) {
        if (stepHits[p.paths[k] ?? 0] === true) {
          pathHits[path] = 1;
          break;
        }
      }
    }
    return (i) => pathHits[field(p, i, 2)] === 1;
  }
  const endpoint = p.trace.endpoints.indexOf(t.replace(/^from\s+/, ""));
  if (endpoint >= 0) return (i) => field(p, i, 1) === endpoint;
  return `'${t}' is not a packet number, an endpoint, delivered, dropped, left, via LINK or at MEMBER`;
}

const filterInput = byId("filter") as HTMLInputElement;
const list = byId("packet-list");
const matchCount = byId("match-count");
const pathBox = byId("path");
let matches: number[] = [];
/** The selected packet: its place in `matches`, and in the trace. */
let chosen = -1;
let first = 0;

function search(text: string): void {
  filterInput.value = text;
  runSearch();
  if (matches.length > 0) choose(0);
}

function runSearch(): void {
  const p = trace;
  if (p === undefined) return;
  const clauses = filterInput.value.split(/\s+and\s+/).filter((c) => c.trim() !== "");
  const tests: Test[] = [];
  for (const c of clauses) {
    const test = clause(p, c);
    if (typeof test === "string") {
      filterInput.classList.add("bad");
      matchCount.textContent = test;
      return;
    }
    tests.push(test);
  }
  filterInput.classList.remove("bad");
  matches = [];
  for (let i = 0; i < p.trace.count; i++) if (tests.every((t) => t(i))) matches.push(i);
  chosen = -1;
  first = 0;
  renderList();
}

function renderList(): void {
  const p = trace;
  if (p === undefined) return;
  const shown = Math.min(LIST_ROWS, matches.length - first);
  matchCount.textContent =
    matches.length > LIST_ROWS
      ? `${matches.length.toLocaleString("en-US")} packets; ${first + 1}–${first + shown} listed (↑ ↓ move on)`
      : `${matches.length.toLocaleString("en-US")} packets`;
  const items: HTMLLIElement[] = [];
  for (let k = first; k < first + shown; k++) {
    const i = matches[k] ?? 0;
    const fates = fatesOf(p, i);
    const li = el(
      "li",
      { "data-packet": String(numberOf(p, i)), "aria-selected": k === chosen ? "true" : "false" },
      `${String(numberOf(p, i)).padStart(6)}  ${p.trace.endpoints[field(p, i, 1)] ?? ""}  `,
      el("span", { class: fates.some((f) => f.startsWith("dropped")) ? "fate-dropped" : "fate" }, fates.join("; ")),
    );
    items.push(li);
  }
  list.replaceChildren(...items);
}

list.addEventListener("click", (e) => {
  const li = (e.target as Element).closest("li");
  if (li === null) return;
  const k = first + [...list.children].indexOf(li);
  choose(k);
});

function choose(k: number): void {
  const p = trace;
  if (p === undefined || k < 0 || k >= matches.length) return;
  chosen = k;
  if (k < first || k >= first + LIST_ROWS) {
    first = Math.max(0, Math.min(k - Math.floor(LIST_ROWS / 2), matches.length - LIST_ROWS));
    renderList();
  }
  for (const li of list.children) li.setAttribute("aria-selected", li === list.children[k - first] ? "true" : "false");
  list.children[k - first]?.scrollIntoView({ block: "nearest" });
  drawPath(matches[k] ?? 0);
}

// ── A packet's path on the drawing ───────────────────────────────────────

let marked: Element[] = [];
let current: { packet: number; steps: StepData[]; at: number } | undefined;
let now: Element[] = [];

function clearPath(): void {
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
function markSteps(steps: readonly StepData[]): Set<string> {
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

function drawPath(i: number): void {
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

function goToStep(k: number): void {
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

function showBytes(packet: number, k: number): void {
  const box = document.getElementById("decoded");
  if (box === null) return;
  box.replaceChildren();
  const bytes = trace?.trace.bytes;
  const v = bytes?.steps[String(packet)]?.[k] ?? -1;
  const shown = v < 0 ? undefined : bytes?.views[v];
  if (bytes === undefined || shown === undefined) return;
  box.append(renderBytes(shown, bytes.records[shown.record] ?? ""));
}

function renderBytes(v: ByteView, hex: string): HTMLElement {
  const len = hex.length / 2;
  const wrap = el(
    "div",
    { class: "decoded" },
    el("div", {}, `${v.what}: ${len - v.at} bytes${v.at > 0 ? ` (after ${v.at} bytes taken off before)` : ""}`),
  );
  const dump = el("pre", { class: "hex" });
  v.layers.forEach((layer, n) => {
    const context = v.only && n > 0;
    const d = el("details", { class: `layer${context ? " context" : ""}` });
    if (!context) d.setAttribute("open", "");
    const title =
      `${layer.design}: ${data.designs[layer.design] ?? ""}, bytes ${layer.at}–${layer.at + layer.len - 1}` +
      (context ? " (carried inside)" : "");
    const table = el("table");
    for (const [name, value, where] of layer.fields)
      table.append(el("tr", {}, el("td", {}, name), el("td", {}, value), el("td", { class: "where" }, where)));
    d.append(el("summary", {}, title), table);
    d.addEventListener("mouseenter", () => highlight(dump, hex, v.at, layer.at, layer.at + layer.len));
    d.addEventListener("mouseleave", () => highlight(dump, hex, v.at, -1, -1));
    wrap.append(d);
  });
  const last = v.layers.at(-1);
  const end = last === undefined ? v.at : last.at + last.len;
  if (end < len) wrap.append(el("div", { class: "layer" }, `payload: ${len - end} bytes`));
  highlight(dump, hex, v.at, -1, -1);
  wrap.append(dump);
  return wrap;
}

/** A hex dump, 16 bytes a line; bytes before `skip` dimmed, [from, to) highlighted. */
function highlight(pre: HTMLElement, hex: string, skip: number, from: number, to: number): void {
  const parts: Node[] = [];
  const len = hex.length / 2;
  for (let line = 0; line < len; line += 16) {
    parts.push(document.createTextNode(`${line.toString(16).padStart(4, "0")}  `));
    for (let b = line; b < Math.min(len, line + 16); b++) {
      const text = `${hex.slice(2 * b, 2 * b + 2)}${b % 16 === 7 ? "  " : " "}`;
      const cls = b < skip ? "skip" : b >= from && b < to ? "hl" : "";
      parts.push(cls === "" ? document.createTextNode(text) : el("span", { class: cls }, text));
    }
    parts.push(document.createTextNode("\n"));
  }
  // Appended one by one, not spread into a call: a record of 64 KiB is over 70,000 nodes.
  const all = document.createDocumentFragment();
  for (const part of parts) all.appendChild(part);
  pre.replaceChildren(all);
}

// ── Keys ──────────────────────────────────────────────────────────────────

const help = byId("help");
byId("help-button").addEventListener("click", () => (help.hidden = !help.hidden));

window.addEventListener("keydown", (e) => {
  const typing = e.target === filterInput;
  if (e.key === "Escape") {
    clearPath();
    select(undefined);
    help.hidden = true;
    if (typing) filterInput.blur();
    return;
  }
  if (typing) {
    if (e.key === "Enter") {
      e.preventDefault();
      runSearch();
      if (matches.length > 0) {
        choose(0);
        list.focus();
      }
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      list.focus();
      choose(Math.max(0, chosen));
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const pan = (dx: number, dy: number): void => {
    view.x += dx * view.w * 0.1;
    view.y += dy * view.h * 0.1;
    applyView();
  };
  switch (e.key) {
    case "/":
      if (trace !== undefined) {
        e.preventDefault();
        filterInput.focus();
        filterInput.select();
      }
      return;
    case "?":
      help.hidden = !help.hidden;
      return;
    case "+":
    case "=":
      zoom(ZOOM_STEP);
      return;
    case "-":
      zoom(1 / ZOOM_STEP);
      return;
    case "0":
      fit();
      return;
  }
  if (e.shiftKey && e.key.startsWith("Arrow")) {
    e.preventDefault();
    pan(
      e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : 0,
      e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0,
    );
    return;
  }
  if (trace === undefined) return;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    choose(Math.max(0, chosen + (e.key === "ArrowDown" ? 1 : -1)));
  } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    e.preventDefault();
    if (current !== undefined) goToStep(current.at + (e.key === "ArrowRight" ? 1 : -1));
  }
});

// ── The analysis: properties, matrices, loops and black holes (--analysis) ─────

const analysisBox = byId("analysis");
const analysisPath = el("div", { id: "analysis-path", "aria-live": "polite" });

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

function renderAnalysis(a: AnalysisData): void {
  const failing = [...a.components.flatMap((c) => c.properties), ...a.properties].filter((p) => !p.holds).length;
  const classes = Object.entries(a.classes)
    .map(([d, n]) => `${d} ${n}`)
    .join(", ");
  analysisBox.append(
    el("h2", {}, "Analysis"),
    el(
      "p",
      { class: "count" },
      `${failing === 0 ? "every property holds" : `${failing} properties fail`}; header classes: ${classes}`,
    ),
  );
  a.components.forEach((c, k) => {
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
      analysisBox.append(heading, propertyList(c.properties), reach);
      return;
    }
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
    if (c.pathsCut !== "") reach.append(` — ${c.pathsCut}`);
    analysisBox.append(heading, propertyList(c.properties), reach, el("div", { class: "matrix-box" }, table));
  });
  analysisBox.append(el("h3", {}, "the whole description"), propertyList(a.properties));
  const list = el("ol", { id: "findings", "aria-label": "loops and black holes" });
  a.findings.forEach((f, k) => {
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
  analysisBox.append(
    el("h3", {}, a.findings.length === 0 ? "no loop, no black hole" : "loops and black holes"),
    list,
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

// ── Start ─────────────────────────────────────────────────────────────────

filterInput.addEventListener("input", () => runSearch());
const notes = byId("notes");
for (const n of data.run?.notes ?? []) notes.append(el("p", {}, n));
if (trace !== undefined) {
  byId("packets").hidden = false;
  runSearch();
}
if (data.analysis !== undefined) renderAnalysis(data.analysis);
fit();
// #packet=N opens on packet N's path.
const wanted = /^#packet=(\d+)$/.exec(location.hash);
if (wanted !== null && trace !== undefined) search(wanted[1] ?? "");
document.documentElement.dataset["ready"] = String(Math.round(performance.now()));
