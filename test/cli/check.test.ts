import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { EXIT_BAD_INPUT, EXIT_OK, main } from "../../src/cli/main.js";

const HUB = "test/fixtures/specs/hub.yaml";

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(["check", ...argv], io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const dir = mkdtempSync(join(tmpdir(), "strata-check-"));
const BAD = join(dir, "bad.yaml");
writeFileSync(
  BAD,
  `networks:
  lan:
    header: ethernet
    members:
      h1: { name: "02:00:00:00:00:01" }
      h2: { name: "02:00:00:00:00:01" }
    links:
      - { from: h1.1, to: h2.1, mdoe: two-way }
`,
);

describe("strata check", () => {
  test("a good description: summary, exit 0", async () => {
    expect(await run(HUB)).toEqual({
      code: EXIT_OK,
      stderr: "",
      stdout: `${HUB}: valid, 1 network
network lan: header ethernet, 4 members, 3 links
  h1: acquire 2, forward 1, send 3, receive 1
  h2: acquire 2, forward 1, send 3, receive 1
  h3: acquire 2, forward 1, send 3, receive 1
  hub: acquire 1, forward 6
`,
    });
  });

  test("--json: the same summary as one object", async () => {
    const { code, stdout } = await run(HUB, "--json");
    expect(code).toBe(EXIT_OK);
    expect(JSON.parse(stdout)).toEqual({
      file: HUB,
      ok: true,
      networks: [
        {
          name: "lan",
          header: "ethernet",
          decrementTtl: false,
          members: 4,
          links: 3,
          tables: {
            h1: { acquire: 2, forward: 1, send: 3, receive: 1 },
            h2: { acquire: 2, forward: 1, send: 3, receive: 1 },
            h3: { acquire: 2, forward: 1, send: 3, receive: 1 },
            hub: { acquire: 1, forward: 6 },
          },
        },
      ],
    });
  });

  test("a bad description: every error on its own line, exit 2", async () => {
    expect(await run(BAD)).toEqual({
      code: EXIT_BAD_INPUT,
      stdout: "",
      stderr:
        `strata: ${BAD}: 6:19 networks.lan.members.h2.name: 02:00:00:00:00:01 is already the name of h1 (member names (addresses) are unique in a network)\n` +
        `strata: ${BAD}: 8:33 networks.lan.links[0].mdoe: unknown key 'mdoe' (did you mean 'mode'?)\n`,
    });
  });

  test("a bad description with --json: the errors as JSON too", async () => {
    const { code, stdout, stderr } = await run(BAD, "--json");
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stderr.split("\n")).toHaveLength(3);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: false,
      omitted: 0,
      errors: [
        { file: BAD, line: 6, column: 19, path: "networks.lan.members.h2.name" },
        { file: BAD, line: 8, column: 33, path: "networks.lan.links[0].mdoe", problem: "unknown key 'mdoe'", fix: "did you mean 'mode'?" },
      ],
    });
  });

  test("the compiler's checks are part of it: a table kind that cannot hold its rows", async () => {
    const path = join(dir, "kind.yaml");
    writeFileSync(
      path,
      `networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      a: { forward: { kind: exact, rows: [ { match: { dst: "02:00:00:00:00:00/8" }, out: 1 } ] } }
`,
    );
    const { code, stdout, stderr } = await run(path);
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stdout).toBe("");
    expect(stderr).toBe(`strata: ${path}: 7:21 networks.lan.tables.a.forward: kind exact cannot hold these rows: their patterns need lpm (write kind: lpm, or leave kind out)\n`);
  });

  test("a missing file: one line, exit 2", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await run(missing)).toEqual({
      code: EXIT_BAD_INPUT,
      stdout: "",
      stderr: `strata: ${missing}: cannot read file: no such file (give the path of a .yaml or .json network description)\n`,
    });
  });

  test("no argument: usage error, exit 2", async () => {
    const { code, stderr } = await run();
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stderr).toContain("missing required argument 'spec'");
  });
});
