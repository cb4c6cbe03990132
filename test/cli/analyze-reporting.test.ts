// What strata analyze says, where it once said something else (issue 30's reporting fixes): a
// network of one member is fully reachable (the seed's predicate, vacuously); a class that got to
// the member asked about is never listed as one that did not, and what it did next is said; a
// loop the TTL ends says so, in the report and in --loops; pairs are over members, and a
// subduction's shared name says so.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";

async function analyze(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(["analyze", ...argv], io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const ONE_MEMBER = `networks:
  lan:
    header: ethernet
    members:
      h1: { name: "02:00:00:00:00:01" }
`;

/** Two routers that send what is for neither to each other: the TTL ends it. */
const TTL_LOOP = "test/fixtures/analysis/ttl-loop.yaml";

let dir = "";
const file = (name: string): string => join(dir, name);
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-reporting-"));
  writeFileSync(file("one.yaml"), ONE_MEMBER);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the report", () => {
  test.each([
    {
      name: "a network of one member: Fully_reachable holds",
      argv: () => [file("one.yaml")],
      has: ["0 of 0 member pairs", "holds Fully_reachable"],
      hasNot: ["FAILS Fully_reachable", "reaches no other member"],
    },
    {
      name: "a loop the TTL ends: said so",
      argv: () => [TTL_LOOP],
      has: ["FAILS No_routing_loops", "ttl=3..254 (until the TTL runs out): ip.r1 forward row 0"],
      hasNot: [],
    },
    {
      name: "a loop no TTL ends (ethernet): nothing said of a TTL",
      argv: () => ["examples/one-way-ring/network.yaml"],
      has: ["FAILS No_routing_loops"],
      hasNot: ["until the TTL runs out"],
    },
    {
      name: "a subduction's shared member: pairs of members, not names",
      argv: () => ["examples/subduction/network.yaml"],
      has: ["30 of 30 member pairs (pairs of members, not names: 6 members have 5 names)"],
      hasNot: [],
    },
    {
      name: "a network whose members' names differ: nothing said of names",
      argv: () => ["examples/ip-router/network.yaml"],
      has: ["member pairs;"],
      hasNot: ["not names"],
    },
  ])("$name", async ({ argv, has, hasNot }) => {
    const r = await analyze(...argv());
    expect(r.stderr).toBe("");
    for (const h of has) expect(r.stdout).toContain(h);
    for (const h of hasNot) expect(r.stdout).not.toContain(h);
  });

  test("--json has each component's members and names", async () => {
    const r = await analyze("examples/subduction/network.yaml", "--json");
    const report = JSON.parse(r.stdout) as { components: { kind: string; members: number; names: number }[] };
    expect(report.components.map((c) => [c.kind, c.members, c.names])).toEqual([
      ["network", 3, 3],
      ["network", 3, 3],
      ["subduction", 6, 5],
    ]);
  });
});

describe("--loops", () => {
  test.each([
    { name: "the TTL ends it", file: () => TTL_LOOP, suffix: true },
    { name: "nothing ends it but the hop limit", file: () => "examples/one-way-ring/network.yaml", suffix: false },
  ])("$name", async ({ file: f, suffix }) => {
    const r = await analyze(f(), "--loops");
    const line = r.stdout.split("\n").find((l) => l.includes("comes back to")) ?? "";
    expect(line).not.toBe("");
    expect(line.endsWith("(until the TTL runs out)")).toBe(suffix);
  });
});

describe("--from --to: a class that got there is not one that did not", () => {
  test("ip:h1 to ip:r: every class gets there, and what each does next is said", async () => {
    const r = await analyze("examples/ip-router/network.yaml", "--from", "ip:h1", "--to", "ip:r");
    expect(r.stdout).toMatch(/^from ip:h1 to ip\.r: 6 header classes get there, 1 delivered\n/);
    expect(r.stdout).not.toContain("do not get there");
    for (const then of [
      "    then ipv4 dst=10.0.2.2 ttl=0..1: dropped at ip.r (ttl-expired)\n",
      "    then ipv4 dst=10.0.2.2 ttl=2..255: delivered to ip.h2\n",
      "    then ipv4 dst=10.0.1.1 ttl=2..255: delivered to ip.h1\n",
    ])
      expect(r.stdout).toContain(then);
  });

  test("--json: the reached classes' after, and no miss", async () => {
    const r = await analyze("examples/ip-router/network.yaml", "--from", "ip:h1", "--to", "ip:r", "--json");
    const answer = (
      JSON.parse(r.stdout) as {
        route: { reach: { start: string; after?: { start: string; end: string }[] }[]; miss: unknown[] };
      }
    ).route;
    expect(answer.miss).toEqual([]);
    expect(answer.reach.find((x) => x.start === "ipv4 dst=10.0.2.2")?.after).toEqual([
      { start: "ipv4 dst=10.0.2.2 ttl=0..1", end: "dropped at ip.r (ttl-expired)" },
      { start: "ipv4 dst=10.0.2.2 ttl=2..255", end: "delivered to ip.h2" },
    ]);
  });

  test("ip:h1 to ip:h2: the classes that do not get there are still listed", async () => {
    const r = await analyze("examples/ip-router/network.yaml", "--from", "ip:h1", "--to", "ip:h2");
    expect(r.stdout).toContain("dropped at ip.h2 (acquire-miss)");
    expect(r.stdout).toMatch(/header classes do not get there:\n/);
  });
});
