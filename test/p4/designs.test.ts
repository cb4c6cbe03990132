// Each header design's P4 (src/p4/designs/): every design of the registry has its module, in
// both of the writer's orders, and the module covers the design — its key fill writes every
// field tables match, its push every field a send row writes, it decrements the hop limit the
// registry names. (What the modules write, composed, is test/p4/golden.test.ts's p4-designs.)

import { describe, expect, it } from "vitest";
import { DEPARSE_ORDER, DESIGNS_P4, p4Of } from "../../src/p4/designs/index.js";
import { p4Ident } from "../../src/p4/names.js";
import { DESIGNS } from "../../src/wire/designs.js";

describe("the designs' P4 modules", () => {
  it("are the registry's designs, in its order (the order header types are declared in)", () => {
    expect(DESIGNS_P4.map((x) => x.design)).toEqual(DESIGNS);
  });
  it("are all in the deparser's order, once", () => {
    expect([...DEPARSE_ORDER].sort((a, b) => a.design.id - b.design.id)).toEqual(DESIGNS_P4);
  });
});

describe.each(DESIGNS.map((d) => [d.name, d] as const))("design %s", (_, design) => {
  const x = p4Of(design);
  const reads = (lines: readonly string[], field: string): boolean =>
    lines.some((l) => new RegExp(`\\bk\\.${p4Ident(field)}\\b`).test(l));

  it("its parser starts in one of its states", () => {
    expect(x.states.some((l) => l.startsWith(`state ${x.start} {`))).toBe(true);
  });
  it.each(design.fields.map((f) => f.name))("its key fill writes %s", (field) => {
    expect(x.keys.some((l) => l.includes(`k.${p4Ident(field)} = `))).toBe(true);
  });
  it.each(design.fields.filter((f) => f.readOnly !== true).map((f) => f.name))("its push reads %s", (field) => {
    expect(reads(x.push, field)).toBe(true);
  });
  it("decrements a hop limit exactly when the registry names one", () => {
    expect(x.decrement !== undefined).toBe(design.hopLimitField !== undefined);
  });
  it("declares the header types of its instances beside them", () => {
    for (const g of x.header)
      for (const h of g.instances) expect(g.types.some((t) => t.startsWith(`header ${h.type} `))).toBe(true);
  });
});
