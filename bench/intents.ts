// The intents scenarios (issue 31, docs/spec.md Intents): the bench's fat-tree
// (./descriptions.ts fatTreeSpec, 1,169 members) routed at IP and written as
// intents — members, links, `routes: {}` and a demand of every member on every
// other, no table — compiled to rows; and one link failure recomputed and
// applied to a running engine, only the rows that changed written. Times are CPU
// time of this process (the machine is shared), wall time beside them.

import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { formatValue } from "../src/description/notation.js";
import { Engine } from "../src/engine/engine.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median } from "./stats.js";

/** An address 10.0.0.0 + n. */
const ip = (n: number): string => formatValue(0x0a000000n + BigInt(n), "ipv4");

/**
 * The fat-tree as intents: a core, `pods` aggregation switches, `edges` edge switches per pod, `hosts` hosts per edge
 * switch. Switches are 10.1.0.1 up; the hosts' block is as large as their count (a power of two) and aligned to it, so
 * that a switch's routes to the hosts below it collapse into one prefix.
 */
export function routedFatTreeSpec(pods = 16, edges = 8, hosts = 8, demands = true, cores = 1): string {
  const n = pods * edges * hosts;
  const core = (c: number): string => (c === 0 ? "core" : `core${c + 1}`);
  const members = Array.from(
    { length: cores },
    (_, c) => `      ${core(c)}: { name: ${ip(0x1ff01 + c)}, role: infra }`,
  );
  const links: string[] = [];
  for (let p = 0; p < pods; p++) {
    members.push(`      a${p + 1}: { name: ${ip(0x10002 + p)}, role: infra }`);
    for (let c = 0; c < cores; c++)
      links.push(`      - { from: a${p + 1}.${edges + 1 + c}, to: ${core(c)}.${p + 1}, mode: two-way }`);
    for (let e = 0; e < edges; e++) {
      const ge = p * edges + e;
      members.push(`      e${ge + 1}: { name: ${ip(0x10002 + pods + ge)}, role: infra }`);
      links.push(`      - { from: e${ge + 1}.${hosts + 1}, to: a${p + 1}.${e + 1}, mode: two-way }`);
      for (let h = 0; h < hosts; h++) {
        const k = ge * hosts + h;
        members.push(`      h${k + 1}: { name: ${ip(n + k)} }`);
        links.push(`      - { from: h${k + 1}.1, to: e${ge + 1}.${h + 1}, mode: two-way }`);
      }
    }
  }
  return `networks:
  ip:
    header: ipv4
    ttl: decrement
    members:
${members.join("\n")}
    links:
${links.join("\n")}
    routes: {}
${demands ? '    demands: [ { from: "*", to: "*" } ]\n' : ""}`;
}

function cpuMs<T>(f: () => T): { value: T; cpu: number; wall: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  return { value, cpu: (c.user + c.system) / 1000, wall };
}

async function rowsFigures(): Promise<Figure[]> {
  const text = routedFatTreeSpec();
  parseSpec(text, "routed-fat-tree.yaml"); // warm
  const load = cpuMs(() => parseSpec(text, "routed-fat-tree.yaml"));
  const rows = load.value.networks.reduce(
    (n, net) => n + [...net.tables.values()].reduce((m, t) => m + (t.forward?.rows.length ?? 0), 0),
    0,
  );
  const both = cpuMs(() => compile(parseSpec(text, "routed-fat-tree.yaml")));
  return [
    {
      name: "intents → rows, 1,169 members (load with routes and demands) (CPU)",
      value: load.cpu,
      unit: "ms",
      goal: { value: 2000, better: "lower" },
    },
    { name: "the same, wall clock", value: load.wall, unit: "ms" },
    { name: "forward rows made (aggregated)", value: rows, unit: "rows" },
    { name: "intents → rows → compiled tables (CPU)", value: both.cpu, unit: "ms" },
  ];
}

/** Link failures timed: links taken in turn, down then up (the first change, which builds the kept state, aside). */
const FAILURES = 20;

/** One change after another on a running engine: CPU and wall time, and rows written, each. */
function changes(cores: number, link: (i: number) => string): { cpu: number[]; wall: number[]; written: number[] } {
  const engine = Engine.open({
    compiled: compile(parseSpec(routedFatTreeSpec(16, 8, 8, false, cores), "routed.yaml")),
  });
  const out = { cpu: [] as number[], wall: [] as number[], written: [] as number[] };
  try {
    engine.setDown({ link: link(0) }, true); // builds the routes' kept state
    engine.setDown({ link: link(0) }, false);
    for (let i = 1; i <= FAILURES; i++)
      for (const down of [true, false]) {
        const t = cpuMs(() => engine.setDown({ link: link(i) }, down));
        out.cpu.push(t.cpu);
        out.wall.push(t.wall);
        const w = t.value.rerouted;
        out.written.push(w === undefined ? 0 : w.inserted + w.modified + w.deleted);
      }
  } finally {
    engine.stop();
  }
  return out;
}

async function failureFigures(): Promise<Figure[]> {
  // The tree: an edge switch's uplink, with no other way (the routes cut off keep their rows: none written).
  const tree = changes(1, (i) => {
    const e = 1 + ((i * 37) % 128);
    return `ip.e${e}.9-a${Math.floor((e - 1) / 8) + 1}.${((e - 1) % 8) + 1}`;
  });
  // With a second core: an aggregation switch's link to the first core, and the routes move to the second.
  const two = changes(2, (i) => `ip.a${(i % 16) + 1}.9-core.${(i % 16) + 1}`);
  return [
    { name: "fat-tree: an uplink down or up, routes kept: median (CPU)", value: median(tree.cpu), unit: "ms" },
    { name: "rows written, median", value: median(tree.written), unit: "rows" },
    {
      name: "with two cores: a core link down or up, routes moved: median (CPU)",
      value: median(two.cpu),
      unit: "ms",
      goal: { value: 50, better: "lower" },
    },
    { name: "the same, median wall clock", value: median(two.wall), unit: "ms" },
    { name: "rows written per change, median", value: median(two.written), unit: "rows" },
    { name: "rows written per change, most", value: Math.max(...two.written), unit: "rows" },
  ];
}

export const intentsFatTree: FigureScenario = {
  name: "intents-fat-tree",
  description: "the bench's fat-tree (1,169 members) written as intents (routes, all-pairs demands) compiled to rows",
  figures: rowsFigures,
};

export const intentsFailure: FigureScenario = {
  name: "intents-link-failure",
  description:
    `one link of the routed fat-tree down, then up (${FAILURES} links), and of the same with a second core: ` +
    `routes recomputed, only changed rows written`,
  figures: failureFigures,
};
