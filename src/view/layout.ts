// Where strata view puts everything: ELK's layered algorithm (elkjs) places the nodes and
// routes the links, top to bottom, with each network's band a partition of its own (so a
// band's rows all lie below the bands above it) and each machine's members joined by an edge
// ELK keeps straight (so they stand in one column). Inside a band, rows follow the network's
// own shape: its leaves are peeled off level by level, and what is left last (a core switch,
// a hub, a router) goes on top. A link between two members of one row is not given to ELK
// (it would push one of them a row down) but drawn as an arc over the row. In a large graph
// the leaves hanging off one node are not given to ELK either: strata lays them out itself,
// in a block of columns under that node (leafBlocks), so that ELK's work follows the rest.
//
// The layout is made once, in Node, when the page is written: the page and --svg draw it as
// it is, so opening the page costs no layout, whatever the description's size.

import { createRequire } from "node:module";
import type elkjs from "elkjs/lib/elk.bundled.js";
import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk.bundled.js";
import type { ViewGraph, ViewNode } from "./graph.js";
import { leafBlocks, rowsInBands } from "./shape.js";

/**
 * ELK's class: module.exports of elkjs, whose `default` is the class. elkjs is CommonJS in a package that names no
 * "type": `import` has Node (20.19 on) parse its 1.6 MB first for ESM syntax, then again as CommonJS; `require` parses
 * it once, ~0.4 s of CPU less each strata view.
 */
const ELK = (createRequire(import.meta.url)("elkjs/lib/elk.bundled.js") as typeof elkjs).default;

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
/**
 * Above this many nodes ELK's cheaper settings are used, and leaves are laid out by strata in
 * blocks (leafBlocks): a fat-tree of a thousand members lays out in seconds, not minutes.
 */
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
  const sizes = new Map(graph.nodes.map((n) => [n.id, nodeSize(n, names)]));
  const partition = (id: string): Record<string, string> => ({
    "elk.partitioning.partition": String(nodeBand.get(id) ?? 0),
  });

  const blocks = large ? blocksOf(graph, sizes) : new Map<string, Block>();
  const inBlock = new Set([...blocks.values()].flatMap((b) => b.leaves));
  const children: ElkNode[] = graph.nodes.flatMap((n) =>
    inBlock.has(n.id)
      ? []
      : [{ id: n.id, ...(sizes.get(n.id) ?? { width: 0, height: 0 }), layoutOptions: partition(n.id) }],
  );
  const blockEdges: ElkExtendedEdge[] = [];
  for (const [id, b] of blocks) {
    children.push({ id, width: b.width, height: b.height, layoutOptions: partition(b.parent) });
    blockEdges.push({ id, sources: [b.parent], targets: [id] });
  }
  const links = linkEdges(graph, inBlock, nodeBand, labels);
  const columns = columnEdges(graph);
  const root: ElkNode = {
    id: "root",
    layoutOptions: elkOptions(large),
    children,
    edges: [...blockEdges, ...links.edges, ...columns.edges],
  };
  const placed = await new ELK().layout(root);
  return finish(graph, placed, { ...links, columnEdges: columns.machineOf, labels, blocks }, names);
}

/** The leaves strata places itself (a large graph's), each block one node for ELK, by the block's node id. */
function blocksOf(graph: ViewGraph, sizes: ReadonlyMap<string, { width: number; height: number }>): Map<string, Block> {
  const blocks = new Map<string, Block>();
  const found = leafBlocks(graph);
  let leaves = 0;
  for (const list of found.values()) leaves += list.length;
  const tall = Math.ceil(Math.sqrt(leaves));
  for (const [parent, list] of found) blocks.set(`b${blocks.size}`, block(parent, list, tall, sizes));
  return blocks;
}

/** The links' segments as ELK edges, each pointing down (from the upper band, or the upper row of one band); those
 * within one row are arcs strata draws, and those to a leaf in a block are strata's too. */
function linkEdges(
  graph: ViewGraph,
  inBlock: ReadonlySet<string>,
  nodeBand: ReadonlyMap<string, number>,
  labels: ReadonlyMap<string, string>,
): Pick<Edges, "segmentOf" | "arcs" | "toLeaves"> & { edges: ElkExtendedEdge[] } {
  const rank = rowsInBands(graph);
  const edges: ElkExtendedEdge[] = [];
  // ELK hands back the edges it was given, by id: the segment each stands for (drawn from its sender).
  const segmentOf = new Map<string, { link: string; segment: number; reversed: boolean }>();
  const arcs: { link: string; segment: number; from: string; to: string }[] = [];
  const toLeaves: LeafSegment[] = [];
  for (const l of graph.links) {
    l.segments.forEach((s, k) => {
      if (inBlock.has(s.from) || inBlock.has(s.to)) {
        const fromLeaf = inBlock.has(s.from);
        toLeaves.push({ link: l.qualified, segment: k, leaf: fromLeaf ? s.from : s.to, reversed: fromLeaf });
        return;
      }
      const [ra, rb] = [rank.get(s.from) ?? 0, rank.get(s.to) ?? 0];
      const sameBand = nodeBand.get(s.from) === nodeBand.get(s.to);
      if (sameBand && ra === rb) {
        arcs.push({ link: l.qualified, segment: k, from: s.from, to: s.to });
        return;
      }
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
  return { edges, segmentOf, arcs, toLeaves };
}

/** Each machine's members joined top to bottom by edges ELK keeps straight, so they stand in one column. */
function columnEdges(graph: ViewGraph): { edges: ElkExtendedEdge[]; machineOf: Map<string, string> } {
  const edges: ElkExtendedEdge[] = [];
  const machineOf = new Map<string, string>();
  for (const m of graph.machines) {
    for (let i = 1; i < m.nodes.length; i++) {
      const id = `c${machineOf.size}`;
      machineOf.set(id, m.name);
      edges.push({
        id,
        sources: [m.nodes[i - 1] as string],
        targets: [m.nodes[i] as string],
        layoutOptions: { "elk.layered.priority.straightness": "100", "elk.layered.priority.shortness": "10" },
      });
    }
  }
  return { edges, machineOf };
}

function elkOptions(large: boolean): Record<string, string> {
  return {
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
  };
}

interface Edges {
  readonly segmentOf: ReadonlyMap<string, { link: string; segment: number; reversed: boolean }>;
  readonly arcs: readonly { link: string; segment: number; from: string; to: string }[];
  /** Column edge id → machine. */
  readonly columnEdges: ReadonlyMap<string, string>;
  /** Label texts by link. */
  readonly labels: ReadonlyMap<string, string>;
  /** Leaf blocks by their node's id (also the id of the edge to it from their parent). */
  readonly blocks: ReadonlyMap<string, Block>;
  readonly toLeaves: readonly LeafSegment[];
}

/** A segment between a leaf in a block and its parent, drawn by strata. */
interface LeafSegment {
  readonly link: string;
  readonly segment: number;
  readonly leaf: string;
  /** Sent by the leaf: its route is the parent's to it, backwards. */
  readonly reversed: boolean;
}

/** What ELK placed, moved right of the bands' labels and down by a margin, with strata's own parts added: the leaves
 * in blocks, the arcs, the machines' columns, the bands. */
function finish(graph: ViewGraph, placed: ElkNode, edges: Edges, names: boolean): Layout {
  let widest = 0;
  for (const n of graph.networks) widest = Math.max(widest, n.name.length, n.design.length + 2);
  const dx = widest * BAND_LABEL_CHAR + 2 * MARGIN;
  const dy = MARGIN + BAND_TOP;
  const at = (p: { x: number; y: number }): Point => ({ x: round(p.x + dx), y: round(p.y + dy) });
  const nodes = new Map<string, Box>();
  const blockBoxes = new Map<string, Box>();
  for (const c of placed.children ?? []) {
    const p = at({ x: c.x ?? 0, y: c.y ?? 0 });
    (edges.blocks.has(c.id) ? blockBoxes : nodes).set(c.id, {
      ...p,
      width: round(c.width ?? 0),
      height: round(c.height ?? 0),
    });
  }
  const { segments, labels, columns } = routes(placed, edges, at, nodes, blockBoxes);
  for (const a of edges.arcs) {
    const from = nodes.get(a.from);
    const to = nodes.get(a.to);
    if (from === undefined || to === undefined) continue;
    const points = arc(from, to);
    segments.push({ link: a.link, segment: a.segment, points, arc: true });
    // Over the arc's top, centred.
    const text = a.segment === 0 ? edges.labels.get(a.link) : undefined;
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
  const bands = bandsOf(graph, nodes);
  let height = (placed.height ?? 0) + dy + MARGIN;
  for (const b of bands) height = Math.max(height, b.y + b.height + MARGIN);
  const width = round((placed.width ?? 0) + dx + MARGIN);
  return { width, height: round(height), nodes, segments, machines, bands, labels, names };
}

/** The routes ELK drew, read back by edge: links' segments and their labels, machines' columns, and the leaves of
 * each block placed under it (their segments routed from the block's edge). */
function routes(
  placed: ElkNode,
  { segmentOf, columnEdges, blocks, toLeaves }: Edges,
  at: (p: { x: number; y: number }) => Point,
  nodes: Map<string, Box>,
  blockBoxes: ReadonlyMap<string, Box>,
): { segments: SegmentRoute[]; labels: Map<string, Point>; columns: Map<string, Point[][]> } {
  const segments: SegmentRoute[] = [];
  const labels = new Map<string, Point>();
  const columns = new Map<string, Point[][]>();
  /** Each block's leaf: the route from its parent to it. */
  const leafRoutes = new Map<string, Point[]>();
  for (const e of placed.edges ?? []) {
    const points = (e.sections ?? []).flatMap((s) => [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]).map(at);
    const b = blocks.get(e.id);
    const box = blockBoxes.get(e.id);
    if (b !== undefined && box !== undefined) {
      placeLeaves(b, box, points, nodes, leafRoutes);
      continue;
    }
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
  for (const t of toLeaves) {
    const route = leafRoutes.get(t.leaf);
    if (route === undefined) continue;
    segments.push({ link: t.link, segment: t.segment, points: t.reversed ? [...route].reverse() : route, arc: false });
  }
  return { segments, labels, columns };
}

/** A band spans its nodes' rows, with room above for arcs. */
function bandsOf(graph: ViewGraph, nodes: ReadonlyMap<string, Box>): Layout["bands"] {
  const spans = new Map<number, { top: number; bottom: number }>();
  for (const v of graph.nodes) {
    const b = nodes.get(v.id);
    if (b === undefined) continue;
    const span = spans.get(v.network);
    if (span === undefined) spans.set(v.network, { top: b.y, bottom: b.y + b.height });
    else [span.top, span.bottom] = [Math.min(span.top, b.y), Math.max(span.bottom, b.y + b.height)];
  }
  return graph.networks.map((n) => {
    const { top, bottom } = spans.get(n.index) ?? { top: Infinity, bottom: -Infinity };
    return { network: n.index, y: round(top - BAND_TOP), height: round(bottom - top + BAND_TOP + BAND_BOTTOM) };
  });
}

/** A link within one row: a curve rising over the row from one node's top to the other's. */
function arc(from: Box, to: Box): Point[] {
  const a = { x: from.x + from.width / 2, y: from.y };
  const b = { x: to.x + to.width / 2, y: to.y };
  const rise = Math.min(BAND_TOP - 8, 8 + Math.abs(b.x - a.x) / 8);
  return [a, { x: a.x, y: a.y - rise }, { x: b.x, y: b.y - rise }, b].map((p) => ({ x: round(p.x), y: round(p.y) }));
}

const round = (v: number): number => Math.round(v * 10) / 10;

// A block, in SVG user units: a bus along its top, where the edge from the parent arrives, and
// before each column of leaves a trunk, from which each leaf's link reaches its left side.
const BLOCK_BUS = 12;
const BLOCK_TRUNK = 12;
const BLOCK_GAP_X = 14;
const BLOCK_GAP_Y = 8;

/** A block of leaves, filled column by column, each column at most `tall` leaves. */
interface Block {
  readonly parent: string;
  readonly leaves: readonly string[];
  /** Leaves in a column; columns are `pitch` apart, rows `rowPitch`. */
  readonly rows: number;
  readonly pitch: number;
  readonly rowPitch: number;
  readonly sizes: readonly { readonly width: number; readonly height: number }[];
  readonly width: number;
  readonly height: number;
}

/**
 * A column holds at most √(all the leaves in blocks) leaves, so that a star of many leaves is
 * not a tower, nor one long row: a fat-tree of 1,024 hosts, 8 under each edge switch, is 128
 * columns of 8; a hub of 20,000 spokes 141 columns of 142 (the last holding 120).
 */
function block(
  parent: string,
  leaves: readonly string[],
  tall: number,
  sizeOf: ReadonlyMap<string, { width: number; height: number }>,
): Block {
  const sizes = leaves.map((id) => sizeOf.get(id) ?? { width: 0, height: 0 });
  let cellW = 0;
  let cellH = 0;
  for (const s of sizes) [cellW, cellH] = [Math.max(cellW, s.width), Math.max(cellH, s.height)];
  const rows = Math.max(1, Math.min(leaves.length, tall));
  const columns = Math.ceil(leaves.length / rows);
  const pitch = BLOCK_TRUNK + cellW + BLOCK_GAP_X;
  const rowPitch = cellH + BLOCK_GAP_Y;
  return {
    parent,
    leaves,
    rows,
    pitch,
    rowPitch,
    sizes,
    width: columns * pitch - BLOCK_GAP_X,
    height: BLOCK_BUS + rows * rowPitch - BLOCK_GAP_Y,
  };
}

/**
 * Puts a block's leaves in `box` (where ELK placed the block) and routes each one's link: the
 * edge from the parent (`into`, ending on the block's top), along the bus to the leaf's column,
 * down its trunk, and across to the leaf.
 */
function placeLeaves(
  b: Block,
  box: Box,
  into: readonly Point[],
  nodes: Map<string, Box>,
  routes: Map<string, Point[]>,
): void {
  const end = into.at(-1) ?? { x: box.x + box.width / 2, y: box.y };
  const bus = round(box.y + BLOCK_BUS / 2);
  b.leaves.forEach((id, i) => {
    const [column, row] = [Math.floor(i / b.rows), i % b.rows];
    const size = b.sizes[i] ?? { width: 0, height: 0 };
    const leaf = {
      x: round(box.x + column * b.pitch + BLOCK_TRUNK),
      y: round(box.y + BLOCK_BUS + row * b.rowPitch),
      width: round(size.width),
      height: round(size.height),
    };
    nodes.set(id, leaf);
    const trunk = round(box.x + column * b.pitch + BLOCK_TRUNK / 2);
    const middle = round(leaf.y + leaf.height / 2);
    const route = [
      ...into,
      { x: end.x, y: bus },
      { x: trunk, y: bus },
      { x: trunk, y: middle },
      { x: leaf.x, y: middle },
    ];
    routes.set(
      id,
      route.filter((p, k) => k === 0 || p.x !== route[k - 1]?.x || p.y !== route[k - 1]?.y),
    );
  });
}
