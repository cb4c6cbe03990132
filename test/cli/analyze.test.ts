// strata analyze from the command line: every example analysed (its verdict
// and its last line), the queries, and one `strata:` line with exit 2 for bad
// input. The analysis itself is checked against the data plane in
// test/analysis/dynamic.test.ts and against the model's theorems in
// test/analysis/theorems.test.ts.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_OK, EXIT_PROBLEM } from "../../src/cli/exit-codes.js";
import { edgeRouter, hub } from "../analysis/helpers/generate.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

async function analyze(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(["analyze", ...argv], io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const lastLine = (text: string): string => text.trimEnd().split("\n").at(-1) ?? "";

/**
 * Every description under examples/ and what the analysis concludes about it; `loops`: No_routing_loops's
 * counterexamples in words and those only counted, by network.
 */
const EXAMPLES: readonly { file: string; code: number; last: string; loops?: Record<string, [number, number]> }[] = [
  { file: "examples/bridged-lans/merged.yaml", code: EXIT_PROBLEM, last: "1 of 7 properties fail" },
  { file: "examples/bridged-lans/network.yaml", code: EXIT_PROBLEM, last: "2 of 20 properties fail" },
  { file: "examples/filter-chain/network.yaml", code: EXIT_PROBLEM, last: "1 of 7 properties fail" },
  { file: "examples/gre/network.yaml", code: EXIT_PROBLEM, last: "2 of 21 properties fail" },
  { file: "examples/hub-and-spoke/network.yaml", code: EXIT_PROBLEM, last: "2 of 7 properties fail" },
  { file: "examples/ip-router-auto/network.yaml", code: EXIT_OK, last: "every property holds (21)" },
  { file: "examples/ip-router/network.yaml", code: EXIT_OK, last: "every property holds (21)" },
  { file: "examples/l2vpn/network.yaml", code: EXIT_PROBLEM, last: "2 of 27 properties fail" },
  { file: "examples/live-router/network.yaml", code: EXIT_OK, last: "every property holds (19)" },
  { file: "examples/one-way-ring/network.yaml", code: EXIT_PROBLEM, last: "1 of 7 properties fail" },
  // Rows compiled from overlays:, l2: and routes: alone; the flood rows copy (Only_unicast_forwarding).
  { file: "examples/overlay-mesh/network.yaml", code: EXIT_PROBLEM, last: "1 of 14 properties fail" },
  // Rows compiled from routes: and demands: alone: fully reachable, no loops, every stated demand met.
  { file: "examples/routed-fat-tree/network.yaml", code: EXIT_OK, last: "every property holds (7)" },
  { file: "examples/subduction/network.yaml", code: EXIT_OK, last: "every property holds (20)" },
  // Each sender picks its own UDP source port: the sessions are two-way all the same.
  { file: "examples/vxlan/network.yaml", code: EXIT_OK, last: "every property holds (21)" },
  { file: "test/fixtures/analysis/black-hole.yaml", code: EXIT_PROBLEM, last: "1 of 7 properties fail" },
  { file: "test/fixtures/analysis/layering-unmet.yaml", code: EXIT_PROBLEM, last: "2 of 21 properties fail" },
  { file: "test/fixtures/analysis/loop.yaml", code: EXIT_PROBLEM, last: "2 of 7 properties fail" },
  // 52 loops in network u: 5 said in words (each a walk of the diagram), the other 47 counted.
  {
    file: "test/fixtures/analysis/session-loop.yaml",
    code: EXIT_PROBLEM,
    last: "12 of 29 properties fail",
    loops: { n0: [0, 0], n1: [1, 0], u: [5, 47] },
  },
];

describe("strata analyze: every example", () => {
  test("the table lists every network description under examples/ (fleet.yaml places them on machines)", () => {
    const files = REPLAY_EXAMPLES.flatMap((d) =>
      readdirSync(`examples/${d}`)
        .filter((f) => /\.(ya?ml|json)$/.test(f) && f !== "example.json" && f !== "fleet.yaml")
        .map((f) => `examples/${d}/${f}`),
    );
    expect(
      EXAMPLES.map((e) => e.file)
        .filter((f) => f.startsWith("examples/"))
        .sort(),
    ).toEqual(files.sort());
  });

  test.each(EXAMPLES)("$file: exit $code, '$last'", async ({ file, code, last, loops }) => {
    const r = await analyze(file);
    expect(r.stderr).toBe("");
    expect(r.stdout.startsWith(`${file}: header classes: `)).toBe(true);
    expect(lastLine(r.stdout)).toBe(last);
    expect(r.code).toBe(code);
    const json = await analyze(file, "--json");
    const rep = JSON.parse(json.stdout) as {
      ok: boolean;
      components: { name: string; properties: { name: string; counterexamples: string[]; more: number }[] }[];
    };
    expect(rep.ok).toBe(code === EXIT_OK);
    expect(json.code).toBe(code);
    if (loops === undefined) return;
    const said = (c: string): [number, number] | undefined => {
      const p = rep.components.find((x) => x.name === c)?.properties.find((x) => x.name === "No_routing_loops");
      return p === undefined ? undefined : [p.counterexamples.length, p.more];
    };
    expect(Object.fromEntries(Object.keys(loops).map((c) => [c, said(c)]))).toEqual(loops);
  });
});

const ROUTER = "examples/ip-router/network.yaml";

/** Queries: the exit code, and lines the answer must hold. */
const QUERIES: readonly { name: string; argv: readonly string[]; code: number; has: readonly string[] }[] = [
  {
    name: "--from/--to: the classes that get there, with their paths",
    argv: [ROUTER, "--from", "ip:h1", "--to", "ip:h2"],
    code: EXIT_OK,
    has: [
      "from ip:h1 to ip.h2: 1 header class gets there, 1 delivered",
      "  ipv4 dst=10.0.2.2 ttl=2..255: delivered",
      "    ip.h1 forward row 0 → ip.h1 transmit row 0 → ip.h1.1-r.1 → lanA.h1 " +
        "send row 0 → lanA.h1 forward row 0 → lanA.h1.1-r.1 → lanA.r acquire " +
        "row 0 → lanA.r receive row 0 → ip.r acquire row 1 → ip.r forward row 1 " +
        "→ ip.r transmit row 1 → ip.r.2-h2.1 → lanB.r send row 0 → lanB.r " +
        "forward row 0 → lanB.r.1-h2.1 → lanB.h2 acquire row 0 → lanB.h2 " +
        "receive row 0 → ip.h2 acquire row 0",
      "  ipv4 dst=10.0.2.2 ttl=0..1: dropped at ip.r (ttl-expired)",
    ],
  },
  {
    name: "--header narrows the classes that enter",
    argv: [ROUTER, "--from", "ip:h1", "--to", "ip:h2", "--header", "dst=10.0.2.0/24"],
    code: EXIT_OK,
    has: [
      "from ip:h1 to ip.h2: 1 header class gets there, 1 delivered",
      "3 header classes do not get there:",
      "  ipv4 dst=10.0.2.0/24 except dst=10.0.2.2 ttl=2..255: dropped at ip.h2 (acquire-miss)",
    ],
  },
  {
    name: "--header that no delivered class meets: exit 1",
    argv: [ROUTER, "--from", "ip:h1", "--to", "ip:h2", "--header", "dst=10.0.3.0/24"],
    code: EXIT_PROBLEM,
    has: ["from ip:h1 to ip.h2: no header class gets there", "  ipv4 dst=10.0.3.0/24: dropped at ip.r (forward-miss)"],
  },
  {
    name: "--loops: none",
    argv: [ROUTER, "--loops"],
    code: EXIT_OK,
    has: ["loops: none (no header class loops)"],
  },
  {
    name: "--loops: the class, the link it comes back to, the path",
    argv: ["test/fixtures/analysis/loop.yaml", "--loops"],
    code: EXIT_PROBLEM,
    has: ["loops: 1", "  lan: dst=02:00:00:00:00:03 comes back to lan.s1.9-s2.9"],
  },
  {
    name: "--black-holes: the switch without a row for h3",
    argv: ["test/fixtures/analysis/black-hole.yaml", "--black-holes"],
    code: EXIT_PROBLEM,
    has: [
      "black holes: 6",
      "  lan: dst=02:00:00:00:00:03 → lan.sw: no forward row (in-link 1)",
      "    lan.h1 forward row 0 → lan.h1.1-sw.1 → lan.sw acquire row 0 → lan.sw forward miss",
    ],
  },
  {
    name: "--unreachable: none in the router",
    argv: [ROUTER, "--unreachable"],
    code: EXIT_OK,
    has: ["unreachable: none (every member is reached by some header)"],
  },
  {
    name: "--unreachable: filter-chain's m0, which nothing forwards to",
    argv: ["examples/filter-chain/network.yaml", "--unreachable"],
    code: EXIT_PROBLEM,
    has: ["unreachable:", "  chain: chain.m0"],
  },
  {
    name: "--equivalent: Bridging Closure, the bridged LANs against their merged network",
    argv: ["examples/bridged-lans/network.yaml", "--equivalent", "examples/bridged-lans/merged.yaml"],
    code: EXIT_OK,
    has: [
      "examples/bridged-lans/network.yaml and " +
        "examples/bridged-lans/merged.yaml are equivalent: the same reachable " +
        "and effectivelyReachable relations",
    ],
  },
  {
    name: "--equivalent: a network with a black hole is not its repaired self",
    argv: ["test/fixtures/analysis/black-hole.yaml", "--equivalent", "examples/hub-and-spoke/network.yaml"],
    code: EXIT_PROBLEM,
    has: ["test/fixtures/analysis/black-hole.yaml and examples/hub-and-spoke/network.yaml are not equivalent:"],
  },
];

/** A search with more paths than anyone would wait for: without --max-steps it ran 5 minutes and 1.9 GB, unfinished. */
const SESSION_LOOP = "test/fixtures/analysis/session-loop.yaml";

describe("strata analyze: a search that stops at --max-steps", () => {
  // The exit says whether some class got there (in 20,000 steps one did), not that the search stopped.
  test.each([
    { steps: 20_000, text: "20,000", code: EXIT_OK },
    { steps: 3, text: "3", code: EXIT_PROBLEM },
  ])("--max-steps $steps: what it found, and that it stopped", async ({ steps, text, code }) => {
    const argv = [SESSION_LOOP, "--from", "u:m2@10", "--to", "u:m0", "--max-steps", String(steps)];
    const r = await analyze(...argv);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(code);
    expect(lastLine(r.stdout)).toBe(
      `the search stopped after ${text} steps (--max-steps), with paths left to walk: the classes above are those ` +
        "it found. Narrow it with --header or a lower --hop-limit, or raise --max-steps",
    );
    const json = JSON.parse((await analyze(...argv, "--json")).stdout) as {
      route: { complete: boolean; steps: number };
    };
    expect(json.route).toMatchObject({ complete: false, steps });
  });

  test("a search that ends says nothing of steps, and --json says it is complete", async () => {
    const argv = [ROUTER, "--from", "ip:h1", "--to", "ip:h2"];
    expect((await analyze(...argv)).stdout).not.toContain("the search stopped");
    expect(JSON.parse((await analyze(...argv, "--json")).stdout)).toMatchObject({ route: { complete: true } });
  });
});

const dir = mkdtempSync(join(tmpdir(), "strata-analyze-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** A generated description, written once. */
function written(name: string, yaml: string): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}
const EDGE = written("edge-router.yaml", edgeRouter(2048, 2000, 64));
const HUB = written("hub-300.yaml", hub(300));

/** Descriptions the analysis cannot finish within its budget: a class bound (a test reads no wall clock). */
const CUT: readonly { name: string; argv: () => string[]; out: () => string }[] = [
  {
    name: "a hub of 300 members (valid): its classes stop at --max-classes",
    argv: () => [HUB, "--max-classes", "100", "--time-limit", "0"],
    out: () =>
      `${HUB}: header classes: ethernet 100 made before the analysis stopped\n` +
      "cut short: the rows cut the ethernet headers into more than 100 classes (--max-classes 100), while building " +
      "the ethernet header classes (299 of 598 behaviours); no property was checked (the description is valid) " +
      "(--max-classes 0 runs it in full)\n",
  },
  {
    name: "an edge router (2,048 ternary rows, a range table, 2,000 routes): no stack overflow, a stop",
    argv: () => [EDGE, "--max-classes", "10", "--time-limit", "0"],
    out: () =>
      `${EDGE}: header classes: ipv4 10 made before the analysis stopped\n` +
      "cut short: the rows cut the ipv4 headers into more than 10 classes (--max-classes 10), while building " +
      "the ipv4 header classes (5 of 6 behaviours); no property was checked (the description is valid) " +
      "(--max-classes 0 runs it in full)\n",
  },
  {
    name: "a query: nothing answered",
    argv: () => [EDGE, "--from", "ip:h1", "--to", "ip:r", "--max-classes", "10", "--time-limit", "0"],
    out: () =>
      "cut short: the rows cut the ipv4 headers into more than 10 classes (--max-classes 10), while building " +
      "the ipv4 header classes (5 of 6 behaviours); nothing was answered (the description is valid) " +
      "(--max-classes 0 runs it in full)\n",
  },
];

describe("strata analyze: a budget that stops it", () => {
  test.each(CUT)("$name: what it found, one line, exit 3", async ({ argv, out }) => {
    const r = await analyze(...argv());
    expect(r).toEqual({ code: EXIT_INCOMPLETE, stdout: out(), stderr: "" });
    const json = await analyze(...argv(), "--json");
    expect(json.code).toBe(EXIT_INCOMPLETE);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, cut: lastLine(out()) });
  });

  test("a hub of 300 members within the default class bound (no time limit in a test): it ends", async () => {
    const r = await analyze(HUB, "--time-limit", "0");
    expect({ code: r.code, last: lastLine(r.stdout) }).toEqual({ code: EXIT_OK, last: "every property holds (7)" });
  });
});

describe("strata analyze: queries", () => {
  test.each(QUERIES)("$name", async ({ argv, code, has }) => {
    const r = await analyze(...argv);
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    for (const line of has) expect(lines).toContain(line);
    expect(r.code).toBe(code);
    const json = await analyze(...argv, "--json");
    expect((JSON.parse(json.stdout) as { ok: boolean }).ok).toBe(code === EXIT_OK);
  });
});

/** Bad input: one `strata:` line, exit 2. */
const ERRORS: readonly { name: string; argv: readonly string[]; stderr: string }[] = [
  {
    name: "no such file",
    argv: ["nope.yaml"],
    stderr: "strata: nope.yaml: cannot read file: no such file (give the path of a .yaml or .json network description)",
  },
  {
    name: "an unknown --from member",
    argv: [ROUTER, "--from", "lanA:nope", "--to", "lanB:h2"],
    stderr: "strata: endpoint 'lanA:nope': network lanA has no member or external link 'nope' (members: h1, r)",
  },
  {
    name: "an unknown --to member",
    argv: [ROUTER, "--from", "lanA:h1", "--to", "lanB:zz"],
    stderr:
      "strata: --to: there is no member 'lanB:zz' (write NETWORK:MEMBER; " +
      "members: lanA:h1, lanA:r, lanB:h2, lanB:r, ip:h1, ip:r, ip:h2)",
  },
  {
    name: "--to without --from",
    argv: [ROUTER, "--to", "ip:h2"],
    stderr: "strata: --to needs --from: where the packets enter (run 'strata analyze --help' for usage)",
  },
  {
    name: "--from without --to",
    argv: [ROUTER, "--from", "ip:h1"],
    stderr: "strata: --from needs --to: the member they should reach (run 'strata analyze --help' for usage)",
  },
  {
    name: "--header without --from",
    argv: [ROUTER, "--header", "dst=10.0.0.0/8"],
    stderr:
      "strata: --header needs --from and --to: it narrows the headers that " +
      "enter at --from (run 'strata analyze --help' for usage)",
  },
  {
    name: "--header: a field the design lacks",
    argv: [ROUTER, "--from", "ip:h1", "--to", "ip:h2", "--header", "foo=1"],
    stderr: "strata: --header: 'foo=1' is not FIELD=PATTERN of ipv4 (fields: src, dst, proto, ttl, dscp, sport, dport)",
  },
  {
    name: "--header: a value of the wrong kind",
    argv: [ROUTER, "--from", "lanA:h1", "--to", "lanB:h2", "--header", "dst=10.0.2.0/24"],
    stderr:
      "strata: --header: dst: '10.0.2.0' is not a MAC address (write six hex " +
      "pairs separated by ':' or '-', like 02:00:00:00:0a:01)",
  },
  {
    name: "--hop-limit out of range",
    argv: [ROUTER, "--loops", "--hop-limit", "0"],
    stderr: "strata: --hop-limit 0 is too small (at least 1)",
  },
  {
    name: "--hop-limit past the data plane's",
    argv: [ROUTER, "--loops", "--hop-limit", "1025"],
    stderr: "strata: --hop-limit 1025 is too large (at most 1024)",
  },
  {
    name: "--max-steps not a whole number",
    argv: [ROUTER, "--from", "ip:h1", "--to", "ip:h2", "--max-steps", "1.5"],
    stderr: "strata: --max-steps 1.5 is not a whole number (give 1 to 1000000000)",
  },
  {
    name: "--max-classes not a whole number",
    argv: [ROUTER, "--max-classes", "1e3"],
    stderr: "strata: --max-classes 1e3 is not a whole number (give 0 for no bound, or 1 to 10000000)",
  },
  {
    name: "--max-classes too large",
    argv: [ROUTER, "--max-classes", "10000001"],
    stderr: "strata: --max-classes 10000001 is too large (at most 10000000; 0 for no bound)",
  },
  {
    name: "--time-limit not a number of seconds",
    argv: [ROUTER, "--time-limit", "3s"],
    stderr: "strata: --time-limit 3s is not a number of seconds (like 3 or 0.5; 0 for none)",
  },
  {
    name: "--time-limit past a day",
    argv: [ROUTER, "--time-limit", "86401"],
    stderr: "strata: --time-limit 86401 is too large (at most 86400 seconds; 0 for no limit)",
  },
];

describe("strata analyze: bad input", () => {
  test.each(ERRORS)("$name", async ({ argv, stderr }) => {
    const r = await analyze(...argv);
    expect(r.code).toBe(EXIT_BAD_INPUT);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    if (stderr !== "") expect(lines[0]).toBe(stderr);
    else expect(lines[0]?.startsWith("strata: ")).toBe(true);
  });
});
