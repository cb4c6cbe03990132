// serve-reload (issue 35, item 2): a reload that cuts thousands of header
// classes, as `strata serve --analyze` meets it. The reconciliation runs on
// the event loop (packets wait for it); the analysis update runs in serve's
// analysis thread, timed here in this one. Before, the first searched the old
// rows once for each row deleted and the second the class diagram once for
// each class cut: 4,000 rows took 13.6 s and minutes.

import { LiveAnalysis } from "../src/analysis/live.js";
import { recoverAllocation } from "../src/control/allocation.js";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { Engine } from "../src/engine/engine.js";
import type { Figure, FigureScenario } from "./scenario.js";

/** Destinations of the ACL. */
const ROWS = 4000;

/**
 * A router r between a and b whose ternary forward table holds `n` /24 destinations, then `cuts`
 * rows on the low bits of the destination: each of those cuts every /24's header class in two.
 */
export function aclSpec(n: number, cuts: number): string {
  const rows = [
    ...Array.from({ length: n }, (_, i) => `          - { match: { dst: 10.${i >> 8}.${i & 255}.0/24 }, out: 2 }`),
    ...Array.from({ length: cuts }, (_, k) => {
      const bit = `0.0.0.${1 << k}`;
      return `          - { match: { dst: "${bit} &&& ${bit}" }, out: drop }`;
    }),
  ];
  return `networks:
  acl:
    header: ipv4
    members:
      a: { name: 10.0.0.1 }
      r: { name: 10.0.1.1, role: infra }
      b: { name: 10.0.3.1 }
    links:
      - { from: a.1, to: r.1, mode: two-way }
      - { from: r.2, to: b.1, mode: two-way }
    tables:
      r:
        acquire: [ { do: forward } ]
        forward:
          kind: ternary
          capacity: ${n + cuts + 1}
          rows:
${rows.join("\n")}
          - { out: 2 }
      a:
        acquire: [ { do: receive } ]
        receive: [ { do: deliver } ]
      b:
        acquire: [ { do: receive } ]
        receive: [ { do: deliver } ]
`;
}

/** CPU time of `f` in ms, and its wall time. */
function timed<T>(f: () => T): { value: T; cpu: number; wall: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  return { value, cpu: (c.user + c.system) / 1000, wall };
}

async function reloadFigures(): Promise<Figure[]> {
  const em = Engine.open({ compiled: compile(parseSpec(aclSpec(ROWS, 0), "acl.yaml")), endpoints: [], flushMs: 0 });
  try {
    const live = new LiveAnalysis(em.installed.compiled);
    live.update(em.installed);
    const next = compile(
      parseSpec(aclSpec(ROWS, 2), "acl.yaml", { previous: recoverAllocation(em.installed.compiled) }),
    );
    const reconciled = timed(() => em.reconcile(next, { rebuild: false }));
    const analysed = timed(() => live.update(em.installed));
    return [
      {
        name: `reload of a ${ROWS.toLocaleString("en-US")}-row ternary ACL adding 2 rows: reconciled (CPU)`,
        value: reconciled.cpu,
        unit: "ms",
      },
      { name: "the same, wall clock", value: reconciled.wall, unit: "ms" },
      {
        name:
          `its analysis update: ${analysed.value.classes.toLocaleString("en-US")} header classes ` +
          "walked again (CPU)",
        value: analysed.cpu,
        unit: "ms",
      },
      { name: "the same, wall clock", value: analysed.wall, unit: "ms" },
    ];
  } finally {
    em.stop();
  }
}

export const serveReload: FigureScenario = {
  name: "serve-reload",
  description:
    `strata serve --analyze's reload of a ${ROWS.toLocaleString("en-US")}-row ternary ACL that adds two rows, ` +
    `each cutting every row's header class in two: the reconciliation (on the event loop) and the analysis ` +
    `update (in its thread)`,
  figures: reloadFigures,
};
