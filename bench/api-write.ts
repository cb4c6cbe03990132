// The library's table writes on a large network (issue 31): one-row batches written through Emulation.write on the
// bench's fat-tree (./descriptions.ts fatTreeSpec, 1,169 members), each checked at the cost of its row
// (src/api/quick-rows.ts); beside them, the whole check a batch cost before (the description loaded and compiled again
// with the row in it: src/api/row-check.ts). Times are CPU time of this process (the machine may be shared).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../src/control/compile.js";
import { loaded } from "../src/api/emulation.js";
import { RowChecker } from "../src/api/row-check.js";
import { Emulation, type RowWrite } from "../src/index.js";
import { fatTreeSpec, mac } from "./descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { scratchDir } from "./scratch.js";
import { median, quantile } from "./stats.js";

/** One-row batches timed through the emulation, and batches of the whole check. */
const BATCHES = 500;
const WHOLE = 20;

/** A new forward row of the first edge switch, the `i`th. */
const row = (i: number): RowWrite => ({
  op: "insert",
  member: "e1",
  table: "forward",
  row: { match: { dst: mac(0x700000 + i) }, out: 1 },
});

function cpuMs(f: () => void): number {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

async function figures(): Promise<Figure[]> {
  const file = join(scratchDir(), "api-write-fat-tree.yaml");
  writeFileSync(file, fatTreeSpec().yaml);
  const em = Emulation.load(file);
  const quick: number[] = [];
  let first = 0;
  try {
    for (let i = 0; i <= BATCHES; i++) {
      const c0 = process.cpuUsage();
      await em.write([row(i)]);
      const c = process.cpuUsage(c0);
      // The first batch also loads the description once for the quick check: told apart.
      if (i === 0) first = (c.user + c.system) / 1000;
      else quick.push((c.user + c.system) / 1000);
    }
  } finally {
    await em.close();
  }
  const { description, spec } = loaded(file);
  const compiled = compile(spec);
  const checker = new RowChecker(description, spec.file, spec.allocation, () => compiled);
  const whole = Array.from({ length: WHOLE }, (_, i) => {
    const w = [row(BATCHES + 1 + i)];
    const places = w.map((x, j) => checker.place(x.member, x.table, j));
    return cpuMs(() => checker.checked(w, places));
  });
  return [
    {
      name: `a one-row batch through Emulation.write, 1,169 members: median of ${BATCHES} (CPU)`,
      value: median(quick),
      unit: "ms",
      goal: { value: 1, better: "lower" },
    },
    { name: "the same, p99 (CPU)", value: quantile(quick, 0.99), unit: "ms" },
    { name: "the first batch (it loads the description once for the quick check) (CPU)", value: first, unit: "ms" },
    {
      name: `the whole check of a one-row batch (every batch's before): median of ${WHOLE} (CPU)`,
      value: median(whole),
      unit: "ms",
    },
  ];
}

export const apiWriteFatTree: FigureScenario = {
  name: "api-write-fat-tree",
  description: "one-row batches written through the library's Emulation.write on the 1,169-member fat-tree",
  figures,
};
