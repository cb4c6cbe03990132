// The page strata view writes: one self-contained HTML file — its styles, the topology's
// SVG, its data (./page-data.ts) and its script (./client/, compiled, joined by
// ./client-script.ts) inline — that opens from disk in any browser with no network access.

import { gzipSync } from "node:zlib";
import { isoTimeNs } from "../time.js";
import { clientScript } from "./client-script.js";
import type { ViewGraph } from "./graph.js";
import type { AnalysisData, PageData, RunData } from "./page-data.js";
import { commentText, esc, WRITTEN_BY } from "./svg.js";
import { DESIGNS } from "../wire/designs.js";

export function pageData(graph: ViewGraph, run: RunData | undefined, analysis?: AnalysisData): PageData {
  const networkName = (i: number): string => graph.networks[i]?.name ?? "";
  return {
    spec: graph.file,
    networks: graph.networks.map((n) => ({ name: n.name, design: n.design, underlays: n.underlays })),
    designs: Object.fromEntries(DESIGNS.map((d) => [d.name, d.summary])),
    nodes: Object.fromEntries(
      graph.nodes.map((n) => [
        n.id,
        {
          kind: n.kind,
          label: n.label,
          network: networkName(n.network),
          ...(n.member !== undefined ? { member: n.member } : {}),
          ...(n.name !== undefined ? { name: n.name } : {}),
          ...(n.role !== undefined ? { role: n.role } : {}),
          ...(n.machine !== undefined ? { machine: n.machine } : {}),
        },
      ]),
    ),
    links: Object.fromEntries(
      graph.links.map((l) => [
        l.qualified,
        {
          name: l.name,
          network: networkName(l.network),
          mode: l.mode,
          kind: l.kind,
          sessions: l.sessions,
          bridging: l.bridging,
          ...(l.shared !== undefined ? { shared: l.shared } : {}),
          ...(l.group !== undefined ? { group: l.group } : {}),
          ...(l.external !== undefined ? { external: l.external } : {}),
        },
      ]),
    ),
    ...(run !== undefined ? { run } : {}),
    ...(analysis !== undefined ? { analysis } : {}),
  };
}

export function renderPage(data: PageData, svg: string): string {
  const title = `${data.spec}${data.run === undefined ? "" : ` — ${data.run.dir}`}`;
  // A line of the page that ends in a backslash goes on in the next.
  return `<!DOCTYPE html>
<!-- ${WRITTEN_BY} from ${commentText(title)}: one self-contained page, no network needed -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>strata view: ${esc(title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
  <h1>strata view <span class="spec">${esc(data.spec)}</span>\
${data.run === undefined ? "" : ` <span class="run">run ${esc(data.run.dir)}</span>`}</h1>
  <div class="tools" role="toolbar" aria-label="view">
    <button type="button" data-zoom="in" title="zoom in (+)">+</button>
    <button type="button" data-zoom="out" title="zoom out (−)">−</button>
    <button type="button" data-zoom="fit" title="fit the page (0)">fit</button>
    <button type="button" id="help-button" title="keys (?)">?</button>
  </div>
  <ul class="legend" aria-label="legend">
    <li><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="lg physical"/></svg>physical link</li>
    <li><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="lg virtual"/></svg>\
virtual link (an underlay session)</li>
    <li><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="lg bridging"/></svg>bridging link</li>
    <li><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="lg shared"/></svg>\
shared link (subduction)</li>
    <li><svg width="26" height="10"><line x1="13" y1="0" x2="13" y2="10" class="lg machine"/></svg>machine</li>
  </ul>
</header>
<main>
  <section id="canvas" tabindex="0" aria-label="the networks: drag to move, wheel to zoom">
${svg}
  </section>
  <aside id="side">
    <section id="details" aria-live="polite"><p class="hint">Click a member or a link for its details.</p></section>
    <section id="packets" hidden>
      <h2>Packets</h2>
      <label class="filter">find <input id="filter" type="search" spellcheck="false" autocomplete="off" \
placeholder="17, lan:h1.1, dropped, delivered to lanB.h2, via lan.trunk" aria-describedby="filter-help"></label>
      <p id="filter-help" class="hint">A number or range (<code>10-20</code>), an endpoint, \
<code>delivered</code> / <code>dropped</code> / <code>left</code> (<code>to</code>, <code>at</code>, <code>on</code> \
a member or link, or a drop reason), <code>via LINK</code>, <code>at MEMBER</code>; join with <code>and</code>.</p>
      <p id="match-count" class="count"></p>
      <ol id="packet-list" tabindex="0" aria-label="packets"></ol>
      <div id="path" aria-live="polite"></div>
    </section>
    <section id="analysis" hidden></section>
    <section id="notes"></section>
  </aside>
</main>
<div id="help" hidden role="dialog" aria-label="keys">
  <p><kbd>/</kbd> find a packet · <kbd>↑</kbd> <kbd>↓</kbd> previous, next packet · \
<kbd>←</kbd> <kbd>→</kbd> previous, next step ·
  <kbd>Esc</kbd> clear · <kbd>+</kbd> <kbd>−</kbd> zoom · <kbd>0</kbd> fit · \
arrows with <kbd>Shift</kbd> move the view ·
  <kbd>Tab</kbd> then <kbd>Enter</kbd> on a member or link for its details</p>
</div>
<script type="${DATA_TYPE}" id="strata-data">${packData(data)}</script>
<script>const isoTimeNs = ${isoTimeNs.toString()};</script>
<script type="module">${clientScript()}</script>
</body>
</html>
`;
}

/** How the page holds its data: JSON, gzipped, in base64 (nothing in it can close the element). */
export const DATA_TYPE = "application/json+gzip+base64";

/**
 * The page's data, packed. A replay of 100,000 packets is tens of megabytes of JSON, mostly
 * repeated words; gzipped it is a tenth of that, and a browser reads a tenth of the page and
 * unpacks it (DecompressionStream) faster than it would read the whole.
 */
export function packData(data: PageData): string {
  return gzipSync(JSON.stringify(data)).toString("base64");
}

// A line that ends in a backslash goes on in the next: the style gets one line.
const PAGE_STYLE = `
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font: 13px/1.4 "DejaVu Sans", Verdana, Arial, sans-serif; color: #1b1f2a; }
body { display: flex; flex-direction: column; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 18px; padding: 6px 12px; \
border-bottom: 1px solid #d5d9e3; background: #fafbfd; }
h1 { font-size: 15px; margin: 0; }
h1 .spec { font-weight: normal; color: #445; }
h1 .run { font-weight: normal; color: #667; font-size: 12px; }
h2 { font-size: 13px; margin: 8px 0 4px; }
.tools button { font: inherit; min-width: 28px; padding: 2px 6px; border: 1px solid #b8bfcf; background: #fff; \
border-radius: 3px; cursor: pointer; }
.tools button:focus-visible, #canvas:focus-visible, #packet-list:focus-visible { outline: 2px solid #2a62c9; \
outline-offset: 1px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; margin: 0; padding: 0; font-size: 11px; \
color: #445; }
.legend li { display: flex; align-items: center; gap: 4px; }
.lg { stroke-width: 2; stroke: #4a4a4a; }
.lg.virtual { stroke: #2a62c9; stroke-dasharray: 6 4; }
.lg.bridging { stroke: #7a3fb0; }
.lg.shared { stroke: #b35900; stroke-dasharray: 9 3 2 3; }
.lg.machine { stroke: #c9c4e6; stroke-width: 8; }
main { flex: 1; display: flex; min-height: 0; }
#canvas { flex: 1; overflow: hidden; position: relative; cursor: grab; background: #fff; }
#canvas.dragging { cursor: grabbing; }
#canvas > svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
#side { width: 520px; max-width: 50vw; overflow: auto; border-left: 1px solid #d5d9e3; padding: 4px 12px 12px; \
background: #fcfcfe; }
.hint { color: #667; font-size: 12px; margin: 4px 0; }
.count { color: #445; font-size: 12px; margin: 4px 0; }
.filter { display: flex; gap: 6px; align-items: center; }
.filter input { flex: 1; font: inherit; padding: 3px 6px; border: 1px solid #b8bfcf; border-radius: 3px; }
.filter input.bad { border-color: #c0392b; background: #fff4f2; }
#packet-list { list-style: none; margin: 0; padding: 0; max-height: 30vh; overflow: auto; border: 1px solid #e1e4ec; \
font: 12px/1.5 "DejaVu Sans Mono", monospace; }
#packet-list li { padding: 0 6px; white-space: nowrap; cursor: pointer; }
#packet-list li:nth-child(even) { background: #f6f7fa; }
#packet-list li[aria-selected="true"] { background: #dfe8fb; }
#packet-list li .fate-dropped { color: #b03020; }
#path pre, .steps { font: 12px/1.5 "DejaVu Sans Mono", monospace; margin: 6px 0; }
.steps { list-style: none; padding: 0; }
.steps li { white-space: pre-wrap; cursor: pointer; padding: 0 4px 0 6ch; text-indent: -4ch; }
.steps li.current { background: #fff1c2; }
.steps li.has-bytes::after { content: " ▸ bytes"; color: #2a62c9; font-size: 10px; }
.steps .head, .steps .fate { cursor: default; color: #223; }
.decoded { border: 1px solid #d5d9e3; background: #fff; padding: 4px 6px; margin: 4px 0 8px; font-size: 12px; }
.decoded .layer { margin: 2px 0; }
.decoded .layer summary { cursor: pointer; font-weight: bold; }
.decoded .layer.context summary { font-weight: normal; color: #556; }
.decoded table { border-collapse: collapse; margin-left: 14px; }
.decoded td { padding: 0 8px 0 0; vertical-align: top; }
.decoded td.where { color: #778; font-size: 11px; }
.hex { font: 11px/1.4 "DejaVu Sans Mono", monospace; white-space: pre; margin: 4px 0 0; color: #334; }
.hex .skip { color: #aab; }
.hex .hl { background: #fff1c2; }
dl.facts { display: grid; grid-template-columns: auto 1fr; gap: 1px 10px; margin: 4px 0; }
dl.facts dt { color: #556; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table.rows { border-collapse: collapse; font-size: 12px; }
table.rows td { padding: 1px 6px 1px 0; vertical-align: top; }
table.rows td.origin { color: #556; overflow-wrap: anywhere; }
#notes p { color: #775; font-size: 12px; }
#help { position: fixed; right: 16px; top: 48px; max-width: 420px; background: #fff; border: 1px solid #b8bfcf; \
padding: 8px 12px; box-shadow: 0 2px 8px rgba(0,0,0,.15); }
kbd { border: 1px solid #b8bfcf; border-radius: 3px; padding: 0 3px; font-size: 11px; background: #f6f7fa; }
/* Selection and a packet's path on the drawing. */
.strata-topology .node.selected rect.box { stroke: #e0a000; stroke-width: 3; }
.strata-topology .link.selected path.seg { stroke: #e0a000; }
.strata-topology.tracing .link path.seg, .strata-topology.tracing .node { opacity: 0.25; }
/* A path stays 4 pixels wide however far the drawing is zoomed out (a fat-tree fitted to the window). */
.strata-topology.tracing .link.hop path.seg.hop { opacity: 1; stroke: #d2691e; stroke-dasharray: none; \
vector-effect: non-scaling-stroke; stroke-width: 4px; }
.strata-topology.tracing .node.hop { opacity: 1; }
.strata-topology.tracing .node.hop rect.box { stroke: #d2691e; stroke-width: 2.5; }
.strata-topology.tracing .node.dropped-here rect.box { stroke: #c0392b; fill: #fde2de; }
.strata-topology.tracing .node.delivered-here rect.box { stroke: #2e8b57; fill: #dff3e6; }
.strata-topology .now rect.box, .strata-topology .link.now path.seg.hop { stroke: #e0a000 !important; \
stroke-width: 5 !important; }
.strata-topology .node:focus { outline: none; }
.strata-topology .node:focus-visible rect.box { stroke: #2a62c9; stroke-width: 3; }
.strata-topology .node, .strata-topology .link { cursor: pointer; }
/* Printed: the drawing across the page (fitted before printing), the legend under the title,
   then what is selected — a member's or link's details, the chosen packet's steps — in full;
   nothing that only works on screen (buttons, the search, the packet list, hints). */
@media print {
  @page { size: landscape; margin: 12mm; }
  html, body { height: auto; font-size: 10pt; }
  body, main { display: block; }
  header { border: none; background: none; padding: 0 0 4pt; }
  header .tools, #help, #packets .filter, #filter-help, #match-count, #packet-list, .hint, \
#side button { display: none !important; }
  #canvas { overflow: visible; border: 1px solid #d5d9e3; }
  #canvas > svg { position: static; display: block; width: 100%; height: auto; max-height: 170mm; }
  #side { width: auto; max-width: none; overflow: visible; border: none; padding: 6pt 0 0; background: none; }
  #packets:not(:has(#path ol)), #details:not(:has(h2)) { display: none !important; }
  .steps li { break-inside: avoid; }
  .steps li.has-bytes::after { content: none; }
  #packet-list li[aria-selected="true"], .steps li.current { background: none; }
}
table.matrix { border-collapse: collapse; font-size: 11px; }
table.matrix th, table.matrix td { border: 1px solid #d5d9e3; padding: 1px 4px; text-align: center; \
white-space: nowrap; }
table.matrix td.reach { background: #e3f1e3; }
table.matrix td.none { background: #fbe7e7; color: #a33; }
table.matrix td.has-path { cursor: pointer; }
.matrix-box { overflow: auto; max-height: 320px; }
ul.properties { padding-left: 16px; }
ul.properties li.fails { color: #a33; }
.counterexample { color: #1b1f2a; font-family: "DejaVu Sans Mono", monospace; font-size: 11px; }
#findings li { cursor: pointer; }
#analysis h3 { font-size: 13px; margin: 12px 0 4px; }
table.matrix td.chosen, #findings li.chosen { outline: 2px solid #c0392b; }
`;
