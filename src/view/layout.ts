// Where strata view puts everything: ELK's layered algorithm (elkjs) places the nodes and
// routes the links, top to bottom, with each network's band a partition of its own (so a
// band's rows all lie below the bands above it) and each machine's members joined by an edge
// ELK keeps straight (so they stand in one column). Inside a band, rows follow the network's
// own shape: its leaves are peeled off level by level, and what is left last (a core switch,
// a hub, a router) goes on top. A link between two members of one row is not given to ELK
// (it would push one of them a row down) but drawn as an arc over the row.
//
// The layout is made once, in Node, when the page is written: the page and --svg draw it as
// it is, so opening the page costs no layout, whatever the description's size.

import elk, { type ElkExtendedEdge, type ElkNode } from "elkjs/lib/elk.bundled.js";
import type { ViewGraph, ViewNode } from "./graph.js";

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** A node's box: top-left corner and size. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface SegmentRoute {
  /** The link's capture name, and the segment's index in its ViewLink.segments. */
  readonly link: string;
  readonly segment: number;
  /** A polyline; with `arc`, a cubic Bézier: start, two control points, end. */
  readonly points: readonly Point[];
  readonly arc: boolean;
}

export interface Layout {
  readonly width: number;
  readonly height: number;
  readonly nodes: ReadonlyMap<string, Box>;
  readonly segments: readonly SegmentRoute[];
  /** Each machine column: a polyline through its members, top to bottom. */
  readonly machines: readonly { readonly name: string; readonly points: readonly Point[] }[];
  /** Each network's band, across the whole width. */
  readonly bands: readonly { readonly network: number; readonly y: number; readonly height: number }[];
  /** Where each link's label starts (its text's left end and baseline), by capture name. */
  readonly labels: ReadonlyMap<string, Point>;
  /** Whether member nodes show their names (addresses) under their keys: only while there are few. */
  readonly names: boolean;
}

/**
 * Above this many members a node shows its key only (its name is in its tooltip and panel),
 * and links carry no labels (their counts and sessions are in their tooltips and panels): at
 * that size they could not be read, and they would cost ELK and the browser time.
 */
export const NAMES_UP_TO = 200;
/** Above this many nodes ELK's cheaper settings are used: a fat-tree of a thousand members lays out in seconds, not
 * minutes. */
const LARGE = 300;

// Sizes, in SVG user units (px): text widths are estimated from character counts.
const KEY_CHAR = 7.4;
const NAME_CHAR = 6.3;
const PAD_X = 8;
const MEMBER_H = 22;
const MEMBER_NAMED_H = 34;
const EXTERNAL_H = 20;
const JUNCTION = 10;
/** Room on the left for the bands' labels, and around the drawing. */
const BAND_LABEL_CHAR = 7.4;
const MARGIN = 16;
/** Room inside a band above its top row (for arcs and their labels) and below its bottom row. */
const BAND_TOP = 30;
const BAND_BOTTOM = 14;

export function nodeSize(n: ViewNode, names: boolean): { width: number; height: number } {
  if (n.kind === "junction") return { width: JUNCTION, height: JUNCTION };
  const key = n.label.length * KEY_CHAR + 2 * PAD_X;
  if (n.kind === "external") return { width: Math.max(28, key), height: EXTERNAL_H };
  if (!names || n.name === undefined) return { width: Math.max(28, key), height: MEMBER_H };
  return { width: Math.max(28, key, n.name.length * NAME_CHAR + 2 * PAD_X), height: MEMBER_NAMED_H };
}

/** Label sizes, estimated from their characters. */
const LABEL_CHAR = 6.2;
const LABEL_H = 12;

/** Lays the graph out; `linkLabels` holds each link's label text, placed by ELK beside the link (or over an arc). */
export async function layOut(graph: ViewGraph, linkLabels: ReadonlyMap<string, string> = new Map()): Promise<Layout> {
  const members = graph.nodes.filter((n) => n.kind === "member").length;
  const names = members <= NAMES_UP_TO;
  const labels = names ? linkLabels : new Map<string, string>();
  const large = graph.nodes.length > LARGE;
  const bandOf = new Map(graph.networks.map((n) => [n.index, n.band]));
  const nodeBand = new Map(graph.nodes.map((n) => [n.id, bandOf.get(n.network) ?? 0]));
  const rank = rowsInBands(graph);

  const children: ElkNode[] = graph.nodes.map((n) => ({
    id: n.id,
    ...nodeSize(n, names),
    layoutOptions: { "elk.partitioning.partition": String(nodeBand.get(n.id) ?? 0) },
  }));
  const edges: ElkExtendedEdge[] = [];
  // ELK hands back the edges it was given, by id: the segment each stands for (drawn from its sender).
  const segmentOf = new Map<string, { link: string; segment: number; reversed: boolean }>();
  const arcs: { link: string; segment: number; from: string; to: string }[] = [];
  for (const l of graph.links) {
    l.segments.forEach((s, k) => {
      const [ra, rb] = [rank.get(s.from) ?? 0, rank.get(s.to) ?? 0];
      const sameBand = nodeBand.get(s.from) === nodeBand.get(s.to);
      if (sameBand && ra === rb) {
        arcs.push({ link: l.qualified, segment: k, from: s.from, to: s.to });
        return;
      }
      // Downwards: from the upper band, or the upper row of one band.
      const down = sameBand ? ra < rb : (nodeBand.get(s.from) ?? 0) < (nodeBand.get(s.to) ?? 0);
      const id = `s${segmentOf.size}`;
      segmentOf.set(id, { link: l.qualified, segment: k, reversed: !down });
      const text = k === 0 ? labels.get(l.qualified) : undefined;
      const label =
        text === undefined || text === ""
          ? {}
          : { labels: [{ id: `l${id}`, text, width: text.length * LABEL_CHAR + 4, height: LABEL_H }] };
      edges.push({ id, sources: [down ? s.from : s.to], targets: [down ? s.to : s.from], ...label });
    });
  }
  if (large) edges.push(...stackedLeaves(graph));
  const columnEdges = new Map<string, string>();
  for (const m of graph.machines) {
    for (let i = 1; i < m.nodes.length; i++) {
      const id = `c${columnEdges.size}`;
      columnEdges.set(id, m.name);
      edges.push({
        id,
        sources: [m.nodes[i - 1] as string],
        targets: [m.nodes[i] as string],
        layoutOptions: { "elk.layered.priority.straightness": "100", "elk.layered.priority.shortness": "10" },
      });
    }
  }
  const root: ElkNode = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.partitioning.activate": "true",
      "elk.edgeRouting": "POLYLINE",
      "elk.spacing.nodeNode": "14",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56",
      "elk.layered.spacing.edgeNodeBetweenLayers": "14",
      "elk.layered.nodePlacement.strategy": large ? "BRANDES_KOEPF" : "NETWORK_SIMPLEX",
      "elk.layered.thoroughness": large ? "1" : "10",
      // Keeping the description's order costs ELK time that grows far faster than the graph: a
      // fat-tree of 585 members took 83 s with it, 4.7 s without. Large graphs go without.
      "elk.layered.considerModelOrder.strategy": large ? "NONE" : "NODES_AND_EDGES",
      "elk.separateConnectedComponents": "false",
      "elk.edgeLabels.inline": "false",
      "elk.spacing.edgeLabel": "3",
    },
    children,
    edges,
  };
  // elkjs is CommonJS: Node's default import is module.exports, whose `default` is the class again.
  const placed = await new elk.default().layout(root);
  return finish(graph, placed, { segmentOf, arcs, columnEdges, labels }, names);
}

interface Edges {
  readonly segmentOf: ReadonlyMap<string, { link: string; segment: number; reversed: boolean }>;
  readonly arcs: readonly { link: string; segment: number; from: string; to: string }[];
  /** Column edge id → machine. */
  readonly columnEdges: ReadonlyMap<string, string>;
  /** Label texts by link. */
  readonly labels: ReadonlyMap<string, string>;
}

function finish(
  graph: ViewGraph,
  placed: ElkNode,
  { segmentOf, arcs, columnEdges, labels: labelTexts }: Edges,
  names: boolean,
): Layout {
  let widest = 0;
  for (const n of graph.networks) widest = Math.max(widest, n.name.length, n.design.length + 2);
  const gutter = widest * BAND_LABEL_CHAR + 2 * MARGIN;
  const dx = gutter;
  const dy = MARGIN + BAND_TOP;
  const at = (p: { x: number; y: number }): Point => ({ x: round(p.x + dx), y: round(p.y + dy) });
  const nodes = new Map<string, Box>();
  for (const c of placed.children ?? []) {
    const p = at({ x: c.x ?? 0, y: c.y ?? 0 });
    nodes.set(c.id, { ...p, width: round(c.width ?? 0), height: round(c.height ?? 0) });
  }
  const segments: SegmentRoute[] = [];
  const labels = new Map<string, Point>();
  const columns = new Map<string, Point[][]>();
  for (const e of placed.edges ?? []) {
    const points = (e.sections ?? []).flatMap((s) => [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]).map(at);
    const machine = columnEdges.get(e.id);
    if (machine !== undefined) {
      const parts = columns.get(machine);
      if (parts === undefined) columns.set(machine, [points]);
      else parts.push(points);
      continue;
    }
    const s = segmentOf.get(e.id);
    if (s === undefined) continue;
    segments.push({ link: s.link, segment: s.segment, points: s.reversed ? points.reverse() : points, arc: false });
    const label = e.labels?.[0];
    if (label !== undefined) labels.set(s.link, at({ x: (label.x ?? 0) + 2, y: (label.y ?? 0) + LABEL_H - 2 }));
  }
  for (const a of arcs) {
    const from = nodes.get(a.from);
    const to = nodes.get(a.to);
    if (from === undefined || to === undefined) continue;
    const points = arc(from, to);
    segments.push({ link: a.link, segment: a.segment, points, arc: true });
    // Over the arc's top, centred.
    const text = a.segment === 0 ? labelTexts.get(a.link) : undefined;
    if (text !== undefined && text !== "") {
      const [p0, p1, p2, p3] = points as [Point, Point, Point, Point];
      labels.set(a.link, {
        x: round((p0.x + p3.x) / 2 - (text.length * LABEL_CHAR) / 2),
        y: round((p0.y + 3 * p1.y + 3 * p2.y + p3.y) / 8 - 4),
      });
    }
  }
  segments.sort((a, b) => (a.link < b.link ? -1 : a.link > b.link ? 1 : a.segment - b.segment));
  const machines = graph.machines.map((m) => ({ name: m.name, points: (columns.get(m.name) ?? []).flat() }));

  // A band spans its nodes' rows, with room above for arcs.
  const spans = new Map<number, { top: number; bottom: number }>();
  for (const v of graph.nodes) {
    const b = nodes.get(v.id);
    if (b === undefined) continue;
    const span = spans.get(v.network);
    if (span === undefined) spans.set(v.network, { top: b.y, bottom: b.y + b.height });
    else [span.top, span.bottom] = [Math.min(span.top, b.y), Math.max(span.bottom, b.y + b.height)];
  }
  const bands = graph.networks.map((n) => {
    const { top, bottom } = spans.get(n.index) ?? { top: Infinity, bottom: -Infinity };
    return { network: n.index, y: round(top - BAND_TOP), height: round(bottom - top + BAND_TOP + BAND_BOTTOM) };
  });
  let height = (placed.height ?? 0) + dy + MARGIN;
  for (const b of bands) height = Math.max(height, b.y + b.height + MARGIN);
  const width = round((placed.width ?? 0) + dx + MARGIN);
  return { width, height: round(height), nodes, segments, machines, bands, labels, names };
}

/** A link within one row: a curve rising over the row from one node's top to the other's. */
function arc(from: Box, to: Box): Point[] {
  const a = { x: from.x + from.width / 2, y: from.y };
  const b = { x: to.x + to.width / 2, y: to.y };
  const rise = Math.min(BAND_TOP - 8, 8 + Math.abs(b.x - a.x) / 8);
  return [a, { x: a.x, y: a.y - rise }, { x: b.x, y: b.y - rise }, b].map((p) => ({ x: round(p.x), y: round(p.y) }));
}

const round = (v: number): number => Math.round(v * 10) / 10;

/**
 * In a large graph, the leaves hanging off one node (a switch's hosts) stand in columns under
 * it rather than side by side in one long row: ELK is given an edge from each leaf to the next
 * of its column, which it lays out but strata does not draw. A column holds at most √(all the
 * leaves) of them, so that a star of many leaves is not a tower either: a fat-tree of 1,024
 * hosts, 8 under each edge switch, is 128 columns of 8 rather than one row of 1,024.
 */
export function stackedLeaves(graph: ViewGraph): ElkExtendedEdge[] {
  const next = new Map<string, Set<string>>(graph.nodes.map((n) => [n.id, new Set<string>()]));
  const network = new Map(graph.nodes.map((n) => [n.id, n.network]));
  for (const l of graph.links) {
    for (const s of l.segments) {
      if (network.get(s.from) !== network.get(s.to)) continue;
      next.get(s.from)?.add(s.to);
      next.get(s.to)?.add(s.from);
    }
  }
  const leavesOf = new Map<string, string[]>();
  for (const n of graph.nodes) {
    const [only, ...more] = next.get(n.id) ?? [];
    if (n.kind !== "member" || only === undefined || more.length > 0 || (next.get(only)?.size ?? 0) <= 1) continue;
    const leaves = leavesOf.get(only);
    if (leaves === undefined) leavesOf.set(only, [n.id]);
    else leaves.push(n.id);
  }
  const tall = Math.ceil(Math.sqrt([...leavesOf.values()].reduce((sum, leaves) => sum + leaves.length, 0)));
  const edges: ElkExtendedEdge[] = [];
  for (const leaves of leavesOf.values()) {
    for (let i = 1; i < leaves.length; i++) {
      if (i % tall !== 0)
        edges.push({ id: `k${edges.length}`, sources: [leaves[i - 1] as string], targets: [leaves[i] as string] });
    }
  }
  return edges;
}

/**
 * Each node's row inside its band, 0 on top: the network's graph (links as undirected edges,
 * external ends and junctions included) is peeled from its leaves, and a node's row is how
 * many peelings after it the last one came. A tree gets its root on top, a star its hub; the
 * members of a ring, never peeled, share one row.
 */
export function rowsInBands(graph: ViewGraph): Map<string, number> {
  const network = new Map(graph.nodes.map((n) => [n.id, n.network]));
  const next = new Map<string, Set<string>>(graph.nodes.map((n) => [n.id, new Set<string>()]));
  for (const l of graph.links) {
    for (const s of l.segments) {
      // A bridging link joins two bands: it does not shape either.
      if (network.get(s.from) !== network.get(s.to)) continue;
      next.get(s.from)?.add(s.to);
      next.get(s.to)?.add(s.from);
    }
  }
  const level = new Map<string, number>();
  let leaves = [...next].filter(([, n]) => n.size <= 1).map(([id]) => id);
  for (let peel = 0; next.size > 0; peel++) {
    if (leaves.length === 0) {
      for (const id of next.keys()) level.set(id, peel);
      break;
    }
    for (const id of leaves) level.set(id, peel);
    const touched = new Set<string>();
    for (const id of leaves) {
      for (const other of next.get(id) ?? []) {
        next.get(other)?.delete(id);
        touched.add(other);
      }
      next.delete(id);
    }
    leaves = [...touched].filter((id) => (next.get(id)?.size ?? 2) <= 1);
  }
  const top = new Map<number, number>();
  for (const [id, v] of level) top.set(network.get(id) ?? 0, Math.max(top.get(network.get(id) ?? 0) ?? 0, v));
  return new Map([...level].map(([id, v]) => [id, (top.get(network.get(id) ?? 0) ?? 0) - v]));
}
