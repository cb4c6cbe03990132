// The header designs main.p4 knows, one module each (./<design>.ts, behind ./design.ts's
// DesignP4), and what the program writer (../program.ts) asks of the designs a machine uses.
// A new design: its entry in src/wire/designs.ts, its module here, and its place in both lists.

import type { DesignDef } from "../../wire/designs.js";
import { cna } from "./cna.js";
import type { DesignP4, HeaderGroup } from "./design.js";
import { ethernet } from "./ethernet.js";
import { gre } from "./gre.js";
import { ipv4 } from "./ipv4.js";
import { ipv6 } from "./ipv6.js";
import { mpls } from "./mpls.js";
import { vxlan } from "./vxlan.js";

export type { DesignP4, HeaderGroup } from "./design.js";

/** In registry order (src/wire/designs.ts): the order of header type declarations. */
export const DESIGNS_P4: readonly DesignP4[] = [ethernet, ipv4, ipv6, cna, gre, vxlan, mpls];

/**
 * Outer layers first: the order of headers_t and of the deparser's emits, every design's payload
 * headers last. One design's headers are valid at a time, so it is an order within a design.
 */
export const DEPARSE_ORDER: readonly DesignP4[] = [ethernet, mpls, cna, ipv6, ipv4, gre, vxlan];

/** A design's P4 (a programmer error if the registry has a design with no module). */
export function p4Of(design: DesignDef): DesignP4 {
  const found = DESIGNS_P4.find((x) => x.design === design);
  if (found === undefined)
    throw new Error(`no P4 for header design ${design.name}: add src/p4/designs/${design.name}.ts`);
  return found;
}

const groupsOf = (x: DesignP4): readonly HeaderGroup[] => [...x.header, ...(x.payload ?? [])];

/** `order`'s groups that `designs` use, each once, in `order`. */
function used(order: readonly HeaderGroup[], designs: readonly DesignDef[]): HeaderGroup[] {
  const wanted = new Set(designs.flatMap((d) => groupsOf(p4Of(d))));
  return [...new Set(order)].filter((g) => wanted.has(g));
}

/** The header groups `designs` use, in declaration order (a shared group at its first design's place). */
export const declaredGroups = (designs: readonly DesignDef[]): HeaderGroup[] =>
  used(DESIGNS_P4.flatMap(groupsOf), designs);

/** The header instances `designs` use, in the order headers_t holds and the deparser emits them. */
export function headerInstances(designs: readonly DesignDef[]): HeaderGroup["instances"][number][] {
  const order = [...DEPARSE_ORDER.flatMap((x) => x.header), ...DEPARSE_ORDER.flatMap((x) => x.payload ?? [])];
  return used(order, designs).flatMap((g) => g.instances);
}

/** The header instances a design's header is made of: what a pop takes off. */
export const headerNames = (design: DesignDef): string[] =>
  p4Of(design).header.flatMap((g) => g.instances.map((h) => h.name));
