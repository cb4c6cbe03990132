// The shape of each network's graph, which the layout follows: a node's row in its band (leaves
// peeled level by level, what is left last on top), and in a large graph, the leaves strata lays
// out itself in blocks under their parent (./layout.ts places them).

import type { ViewGraph } from "./graph.js";

/**
 * In a large graph, the leaves hanging off one node (a switch's hosts, a hub's spokes) are not
 * given to ELK: it places one box for them under that node, joined to it by one edge, and
 * strata fills the box (placeLeaves, in ./layout.ts). Given to ELK one by one, in columns, each leaf's edge
 * crossed every row above it as a dummy node of ELK's: a hub of 10,000 spokes made about half a
 * million, and the heap ran out at 4.3 GB. A leaf here is a member with one neighbour in its
 * network, that neighbour having others; it is left to ELK when it stands in a machine's
 * column or has a link to another network, which place it apart. By parent, in the
 * description's order.
 */
export function leafBlocks(graph: ViewGraph): Map<string, string[]> {
  const network = new Map(graph.nodes.map((n) => [n.id, n.network]));
  const next = new Map<string, Set<string>>(graph.nodes.map((n) => [n.id, new Set<string>()]));
  const apart = new Set(graph.machines.flatMap((m) => m.nodes));
  for (const l of graph.links) {
    for (const s of l.segments) {
      if (network.get(s.from) !== network.get(s.to)) {
        apart.add(s.from);
        apart.add(s.to);
        continue;
      }
      next.get(s.from)?.add(s.to);
      next.get(s.to)?.add(s.from);
    }
  }
  const blocks = new Map<string, string[]>();
  for (const n of graph.nodes) {
    const around = next.get(n.id);
    if (n.kind !== "member" || apart.has(n.id) || around?.size !== 1) continue;
    const [parent] = around;
    if (parent === undefined || parent === n.id || (next.get(parent)?.size ?? 0) <= 1) continue;
    const leaves = blocks.get(parent);
    if (leaves === undefined) blocks.set(parent, [n.id]);
    else leaves.push(n.id);
  }
  return blocks;
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
