// The topology as one SVG: bands, machine columns, links and nodes where the layout put
// them, each element named by data attributes in the words of traces and summaries
// (data-network, data-member, data-link), so that the page, a test or a reader of the file
// can find it. With a run's counts, a link's width grows with the packets it carried (on a
// log scale) and members carry badges for what they delivered and dropped.
// `strata view --svg` writes this; the page holds the same SVG and brings it to life.

import type { ViewGraph, ViewLink, ViewNode } from "./graph.js";
import type { Box, Layout, Point } from "./layout.js";

/** Near the top of every file strata view writes (page or SVG): how it knows a file it may replace. */
export const WRITTEN_BY = "written by strata view";

/** What a run counted, as summary.json has it. */
export interface Counts {
  /** Packets per link, by capture name. */
  readonly links: Readonly<Record<string, number>>;
  /** Per member ("network.key"): packets delivered and dropped. */
  readonly members: Readonly<Record<string, { readonly delivered: number; readonly dropped: number }>>;
}

/** Stroke widths of links: the thinnest carried nothing, the widest carried the most packets. */
const WIDTH_MIN = 1.2;
const WIDTH_MAX = 7;

// A line that ends in a backslash goes on in the next: the style gets one line.
export const SVG_STYLE = `
.strata-topology { background: #fff; }
.band rect { stroke: none; }
.band:nth-child(odd) rect { fill: #f3f6fb; }
.band:nth-child(even) rect { fill: #f8f5ee; }
.band-name { font-size: 13px; font-weight: bold; fill: #223; }
.band-design { font-size: 11px; fill: #667; }
.machine polyline { fill: none; stroke: #c9c4e6; stroke-width: 9; stroke-linecap: round; stroke-linejoin: round; \
opacity: 0.8; }
.machine-name { font-size: 10px; fill: #7a74a8; text-anchor: middle; }
.link path.seg { fill: none; stroke: #4a4a4a; stroke-linejoin: round; }
.link.virtual path.seg { stroke: #2a62c9; stroke-dasharray: 6 4; }
.link.bridging path.seg { stroke: #7a3fb0; }
.link.shared path.seg { stroke: #b35900; stroke-dasharray: 9 3 2 3; }
.link.idle path.seg { opacity: 0.45; }
.link path.hit { fill: none; stroke: transparent; stroke-width: 10; }
.link-label { font-size: 10px; fill: #335; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
.node rect.box { fill: #fff; stroke: #3a4a6a; stroke-width: 1.2; }
.node.infra rect.box { fill: #eef1f8; }
.node.external rect.box { fill: #fff; stroke-dasharray: 3 2; }
.node.junction circle { fill: #3a4a6a; }
.node .key { font-size: 12px; font-weight: bold; fill: #112; text-anchor: middle; }
.node .name { font-size: 10px; fill: #556; text-anchor: middle; }
.node.external .key { font-weight: normal; font-style: italic; }
.badge text { font-size: 9px; fill: #fff; text-anchor: middle; font-weight: bold; }
.badge.dropped rect { fill: #c0392b; }
.badge.delivered rect { fill: #2e8b57; }
`;

export interface SvgOptions {
  readonly counts?: Counts;
  /** A standalone file (--svg): with an XML declaration and its own title. */
  readonly standalone?: boolean;
}

export function renderSvg(graph: ViewGraph, layout: Layout, options: SvgOptions = {}): string {
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const out = [
    ...(options.standalone === true
      ? ['<?xml version="1.0" encoding="UTF-8"?>', `<!-- ${WRITTEN_BY} from ${commentText(graph.file)} -->`]
      : []),
    '<svg xmlns="http://www.w3.org/2000/svg" class="strata-topology" ' +
      `viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}" ` +
      'font-family="DejaVu Sans, Verdana, Arial, sans-serif">',
    `<title>${esc(graph.file)}: networks, members and links (strata view)</title>`,
    `<style>${SVG_STYLE}</style>`,
    '<defs><marker id="strata-arrow" viewBox="0 0 8 8" refX="7" refY="4" ' +
      'markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" ' +
      'orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" ' +
      'fill="#4a4a4a"/></marker></defs>',
    ...bandGroup(graph, layout),
    ...machineGroup(graph, layout, nodes),
    ...linkGroups(graph, layout, nodes, options.counts),
    '<g class="nodes">',
    ...graph.nodes.flatMap((n) => {
      const box = layout.nodes.get(n.id);
      return box === undefined ? [] : [renderNode(n, box, layout.names, options.counts)];
    }),
    "</g>",
    "</svg>",
  ];
  return `${out.join("\n")}\n`;
}

/** Each network's band across the drawing, its name and design at its left, lowest band first. */
function bandGroup(graph: ViewGraph, layout: Layout): string[] {
  const out = ['<g class="bands">'];
  const bandOf = new Map(layout.bands.map((b) => [b.network, b]));
  for (const n of [...graph.networks].sort((a, b) => a.band - b.band)) {
    const b = bandOf.get(n.index);
    if (b === undefined) continue;
    out.push(
      `<g class="band" data-network="${esc(n.name)}">` +
        `<rect x="0" y="${b.y}" width="${layout.width}" height="${b.height}"/>` +
        `<text class="band-name" x="12" y="${b.y + 18}">${esc(n.name)}</text>` +
        `<text class="band-design" x="12" y="${b.y + 32}">${esc(n.design)}</text></g>`,
    );
  }
  out.push("</g>");
  return out;
}

/** Each machine as a line through its members, named under the lowest. */
function machineGroup(graph: ViewGraph, layout: Layout, nodes: ReadonlyMap<string, ViewNode>): string[] {
  const machines = new Map(graph.machines.map((m) => [m.name, m]));
  const out = ['<g class="machines">'];
  for (const m of layout.machines) {
    if (m.points.length === 0) continue;
    const ids = machines.get(m.name)?.nodes ?? [];
    const members = ids.map((id) => nodes.get(id)?.member ?? id);
    // The machine's name under its lowest member.
    const low = layout.nodes.get(ids.at(-1) ?? "");
    const name =
      low === undefined
        ? ""
        : `<text class="machine-name" x="${round(low.x + low.width / 2)}" y="${round(low.y + low.height + 11)}">` +
          `machine ${esc(m.name)}</text>`;
    out.push(
      `<g class="machine" data-machine="${esc(m.name)}">` +
        `<polyline points="${m.points.map((p) => `${p.x},${p.y}`).join(" ")}"/>${name}` +
        `<title>machine ${esc(m.name)}: ${esc(members.join(", "))}</title></g>`,
    );
  }
  out.push("</g>");
  return out;
}

/** Each link, its segments as wide as the packets it carried (on a log scale), and then the links' labels. */
function linkGroups(
  graph: ViewGraph,
  layout: Layout,
  nodes: ReadonlyMap<string, ViewNode>,
  counts: Counts | undefined,
): string[] {
  const links = new Map(graph.links.map((l) => [l.qualified, l]));
  let most = 0;
  for (const packets of Object.values(counts?.links ?? {})) most = Math.max(most, packets);
  const width = (packets: number): number =>
    most === 0 ? WIDTH_MIN : WIDTH_MIN + ((WIDTH_MAX - WIDTH_MIN) * Math.log1p(packets)) / Math.log1p(most);
  const labels: string[] = [];
  const out = ['<g class="links">'];
  for (const [capture, segs] of groupBy(layout.segments, (s) => s.link)) {
    const l = links.get(capture);
    if (l === undefined) continue;
    const packets = counts?.links[capture] ?? 0;
    const classes = [
      "link",
      l.kind,
      l.mode,
      ...(l.bridging ? ["bridging"] : []),
      ...(l.shared !== undefined ? ["shared"] : []),
      ...(counts !== undefined && packets === 0 ? ["idle"] : []),
    ];
    const stroke = counts === undefined ? "" : ` stroke-width="${round(width(packets))}"`;
    const arrow =
      l.mode === "one-way" || l.mode === "allcast" || l.mode === "anycast" ? ' marker-end="url(#strata-arrow)"' : "";
    const paths = segs.map((s) => {
      const d = pathOf(s.points, s.arc);
      const seg = l.segments[s.segment];
      const receiver = seg?.receiver === undefined ? "" : ` data-receiver="${esc(seg.receiver)}"`;
      // A group link's arrow is drawn where it reaches a receiver, not at its junction.
      const head = seg !== undefined && nodes.get(seg.to)?.kind === "junction" ? "" : arrow;
      return (
        `<path class="seg" data-seg="${s.segment}"${receiver} d="${d}"${stroke}${head}/>` +
        `<path class="hit" d="${d}"/>`
      );
    });
    out.push(
      `<g class="${classes.join(" ")}" data-link="${esc(capture)}">${paths.join("")}` +
        `<title>${esc(linkTitle(l, counts === undefined ? undefined : packets))}</title></g>`,
    );
    const text = linkLabel(l, counts);
    const at = layout.labels.get(capture);
    if (text !== "" && at !== undefined)
      labels.push(`<text class="link-label" data-link="${esc(capture)}" x="${at.x}" y="${at.y}">${esc(text)}</text>`);
  }
  out.push("</g>", `<g class="link-labels">${labels.join("")}</g>`);
  return out;
}

function renderNode(n: ViewNode, box: Box, names: boolean, counts: Counts | undefined): string {
  const at = `transform="translate(${box.x},${box.y})"`;
  if (n.kind === "junction") {
    const r = box.width / 2;
    return (
      `<g class="node junction" data-node="${n.id}" ${at}><circle cx="${r}" cy="${r}" r="${r}"/>` +
      `<title>group ${esc(n.label)}</title></g>`
    );
  }
  if (n.kind === "external") {
    return (
      `<g class="node external" data-node="${n.id}" ${at}>` +
      `<rect class="box" width="${box.width}" height="${box.height}" rx="${box.height / 2}"/>` +
      `<text class="key" x="${box.width / 2}" y="${box.height / 2 + 4}">${esc(n.label)}</text>` +
      `<title>external end ${esc(n.label)}: outside the network</title></g>`
    );
  }
  const named = names && n.name !== undefined;
  const text = named
    ? `<text class="key" x="${box.width / 2}" y="14">${esc(n.label)}</text>` +
      `<text class="name" x="${box.width / 2}" y="27">${esc(n.name ?? "")}</text>`
    : `<text class="key" x="${box.width / 2}" y="${box.height / 2 + 4}">${esc(n.label)}</text>`;
  const got = n.member === undefined ? undefined : counts?.members[n.member];
  const badges: string[] = [];
  if (got !== undefined) {
    let right = box.width;
    for (const [kind, value] of [
      ["dropped", got.dropped],
      ["delivered", got.delivered],
    ] as const) {
      if (value === 0) continue;
      const label = compact(value);
      const w = 8 + label.length * 5.6;
      right -= w;
      badges.push(
        `<g class="badge ${kind}" transform="translate(${round(right)},-7)">` +
          `<rect width="${round(w)}" height="12" rx="6"/><text x="${round(w / 2)}" y="9">${label}</text></g>`,
      );
      right -= 2;
    }
  }
  const title =
    `${n.member ?? n.label} — ${n.name ?? ""} (${n.role ?? "user"}), machine ${n.machine ?? ""}` +
    (got === undefined ? "" : `: delivered ${got.delivered}, dropped ${got.dropped}`);
  return (
    `<g class="node member ${n.role ?? "user"}" data-node="${n.id}" data-member="${esc(n.member ?? "")}" ` +
    `data-machine="${esc(n.machine ?? "")}" ${at}>` +
    `<rect class="box" width="${box.width}" height="${box.height}" rx="4"/>${text}${badges.join("")}` +
    `<title>${esc(title)}</title></g>`
  );
}

/** A link's label: the packets it carried (with a run's counts), and the sessions implementing it. */
export function linkLabel(l: ViewLink, counts: Counts | undefined): string {
  return [
    ...(counts === undefined ? [] : [String(counts.links[l.qualified] ?? 0)]),
    ...l.sessions.map((s) => `via ${s}`),
  ].join(" · ");
}

function linkTitle(l: ViewLink, packets: number | undefined): string {
  const parts = [`${l.qualified} (${l.mode}${l.group === undefined ? "" : `, group ${l.group}`})`];
  if (l.sessions.length > 0) parts.push(`virtual: implemented by session ${l.sessions.join(", ")}`);
  if (l.bridging) parts.push("bridging");
  if (l.shared !== undefined) parts.push(`shared with ${l.shared}`);
  if (l.external !== undefined) parts.push(`external end ${l.external}`);
  if (packets !== undefined) parts.push(`${packets} packets`);
  return parts.join("; ");
}

function pathOf(points: readonly Point[], arc: boolean): string {
  const [first, ...rest] = points;
  if (first === undefined) return "";
  if (arc && rest.length === 3) return `M${first.x},${first.y} C${rest.map((p) => `${p.x},${p.y}`).join(" ")}`;
  return `M${first.x},${first.y} ${rest.map((p) => `L${p.x},${p.y}`).join(" ")}`;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list === undefined) out.set(k, [item]);
    else list.push(item);
  }
  return out;
}

/** 1234 → "1.2k": a badge stays small. */
function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${round(n / 1000)}k`;
  return `${round(n / 1e6)}M`;
}

const round = (v: number): number => Math.round(v * 10) / 10;

/** Characters XML cannot hold, even as character references. */
const NOT_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;

/**
 * Text for XML content and attribute values (the page's HTML too): markup characters as
 * character references, and the characters XML cannot hold at all (C0 controls but tab and
 * newlines, U+FFFE, U+FFFF), which a file's name may have, as U+FFFD.
 */
export function esc(text: string): string {
  return text.replace(NOT_XML, "\ufffd").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Text for inside a comment, XML's or HTML's: XML allows no "--" in one (HTML ends one at
 * "-->" or "--!>"), so a space goes between two hyphens: "a---b" is written "a- - -b".
 */
export function commentText(text: string): string {
  return text.replace(NOT_XML, "\ufffd").replace(/-(?=-)/g, "- ");
}
