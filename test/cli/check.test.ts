import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "../..//src/cli/exit-codes.js";
import { hub, ternaryAcl } from "../analysis/helpers/generate.js";

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
      allocation: {
        links: [
          { network: "lan", link: "h1.1-hub.1", member: "h1", ident: 1, allocated: false },
          { network: "lan", link: "h1.1-hub.1", member: "hub", ident: 1, allocated: false },
          { network: "lan", link: "h2.1-hub.2", member: "h2", ident: 1, allocated: false },
          { network: "lan", link: "h2.1-hub.2", member: "hub", ident: 2, allocated: false },
          { network: "lan", link: "h3.1-hub.3", member: "h3", ident: 1, allocated: false },
          { network: "lan", link: "h3.1-hub.3", member: "hub", ident: 3, allocated: false },
        ],
        sessions: [],
      },
      warnings: [],
    });
  });

  /** The cheap properties of the analysis: warnings with a path of rows; the description is valid all the same. */
  const WARNINGS: readonly { name: string; argv: readonly string[]; warnings: readonly string[] }[] = [
    {
      name: "a loop",
      argv: ["test/fixtures/analysis/loop.yaml"],
      warnings: [
        "warning: No_routing_loops: lan: dst=02:00:00:00:00:03 comes back to lan.s1.9-s2.9",
        "  lan.h1 forward row 0 → lan.h1.1-s1.1 → lan.s1 acquire row 0 → lan.s1 " +
          "forward row 2 → lan.s1.9-s2.9 → lan.s2 acquire row 0 → lan.s2 forward " +
          "row 2 → lan.s1.9-s2.9 → lan.s1 acquire row 0 → lan.s1 forward row 2 → " +
          "lan.s1.9-s2.9",
      ],
    },
    {
      name: "a session's header dropped by a miss",
      argv: ["test/fixtures/analysis/layering-unmet.yaml"],
      warnings: [
        "warning: session black hole: lanB: type=0x0800 except " +
          "dst=02:00:00:00:0a:01, dst=02:00:00:00:0a:fe, dst=02:00:00:00:0b:02 " +
          "(+1 more) (lanB.r session 1) → lanB.h2: no acquire row (in-link 1)",
        "  lanB.r forward row 0 → lanB.r.1-h2.1 → lanB.h2 acquire miss",
      ],
    },
    { name: "--no-analyze: none", argv: ["test/fixtures/analysis/loop.yaml", "--no-analyze"], warnings: [] },
    { name: "none in the router", argv: ["examples/ip-router/network.yaml"], warnings: [] },
  ];

  test.each(WARNINGS)("warnings: $name", async ({ argv, warnings }) => {
    const { code, stdout, stderr } = await run(...argv);
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    const lines = stdout.trimEnd().split("\n");
    const first = lines.findIndex((l) => l.startsWith("warning: "));
    expect(first < 0 ? [] : lines.slice(first)).toEqual(warnings);
    const json = JSON.parse((await run(...argv, "--json")).stdout) as { warnings: unknown[] };
    expect(json.warnings).toHaveLength(warnings.length / 2);
  });

  /**
   * A description valid but too large for the analysis's budget: valid all the same, exit 0, and a line saying how far
   * the analysis got and the flag that runs it in full. Budgets by classes here: a time limit is wall time.
   */
  const CUT: readonly { name: string; file: () => string; argv: readonly string[]; cut: string | undefined }[] = [
    { name: "the ACL, --no-analyze", file: () => join(dir, "acl-34.yaml"), argv: ["--no-analyze"], cut: undefined },
    {
      name: "a hub of 300 members within the default budget",
      file: () => join(dir, "hub-300.yaml"),
      argv: [],
      cut: undefined,
    },
    {
      name: "the hub, --max-classes 100",
      file: () => join(dir, "hub-300.yaml"),
      argv: ["--max-classes", "100", "--time-limit", "0"],
      cut:
        "analysis cut short: the rows cut the ethernet headers into more than 100 classes (--max-classes 100), while " +
        "building the ethernet header classes (299 of 598 behaviours); no warning was looked for (header classes: " +
        "ethernet 100 made) (strata check --max-classes 0 runs it in full)",
    },
  ];

  test.each(CUT)("cut short: $name", async ({ file, argv, cut }) => {
    writeFileSync(join(dir, "acl-34.yaml"), ternaryAcl(34));
    writeFileSync(join(dir, "hub-300.yaml"), hub(300));
    const { code, stdout, stderr } = await run(file(), ...argv);
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    expect(stdout.startsWith(`${file()}: valid, 1 network\n`)).toBe(true);
    const last = stdout.trimEnd().split("\n").at(-1);
    if (cut === undefined) expect(last).not.toMatch(/cut short/);
    else expect(last).toBe(cut);
    const json = JSON.parse((await run(file(), ...argv, "--json")).stdout) as { ok: boolean; analysisCut?: string };
    expect([json.ok, json.analysisCut]).toEqual([true, cut]);
  });

  const AUTO = "examples/ip-router-auto/network.yaml";

  test("identifiers left out: the summary lists what strata allocated", async () => {
    const { code, stdout, stderr } = await run(AUTO);
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    expect(stdout.split("\n").filter((l) => l.includes("allocated"))).toEqual([
      "  allocated link identifiers: h1.1 (h1-r), r.1 (h1-r)",
      "  allocated sessions: h1@1 (to-r), r@1 (to-h1)",
      "  allocated link identifiers: r.1 (r-h2), h2.1 (r-h2)",
      "  allocated sessions: h2@1 (to-r), r@1 (to-h2)",
      "  allocated link identifiers: h1.1 (h1-r), r.1 (h1-r), r.2 (r-h2), h2.1 (r-h2)",
    ]);
  });

  test("--previous: identifiers left out keep the values they had in the earlier version", async () => {
    const v1 = join(dir, "v1.yaml");
    const v2 = join(dir, "v2.yaml");
    const members =
      "    header: ethernet\n    members:\n" +
      [1, 2, 3].map((i) => `      h${i}: { name: "02:00:00:00:00:0${i}" }\n`).join("") +
      '      sw: { name: "02:00:00:00:00:fe" }\n    links:\n';
    const link = (h: string): string => `      - { from: ${h}, to: sw, mode: two-way }\n`;
    writeFileSync(v1, `networks:\n  lan:\n${members}${link("h1")}${link("h2")}`);
    writeFileSync(v2, `networks:\n  lan:\n${members}${link("h3")}${link("h2")}${link("h1")}`);
    const at = (stdout: string): string | undefined => stdout.split("\n").find((l) => l.includes("allocated"));
    expect(at((await run(v2)).stdout)).toBe(
      "  allocated link identifiers: h3.1 (h3-sw), sw.1 (h3-sw), h2.1 " +
        "(h2-sw), sw.2 (h2-sw), h1.1 (h1-sw), sw.3 (h1-sw)",
    );
    const kept = await run(v2, "--previous", v1);
    expect(kept.code).toBe(EXIT_OK);
    expect(at(kept.stdout)).toBe(
      "  allocated link identifiers: h3.1 (h3-sw), sw.3 (h3-sw), h2.1 " +
        "(h2-sw), sw.2 (h2-sw), h1.1 (h1-sw), sw.1 (h1-sw)",
    );
    // A bad earlier version is a bad description: its errors, exit 2.
    const bad = await run(v2, "--previous", BAD);
    expect(bad.code).toBe(EXIT_BAD_INPUT);
    expect(bad.stderr).toContain("bad.yaml: 8:");
  });

  test("identifiers left out: --json has the allocation, link end by link end and session by session", async () => {
    const { code, stdout } = await run(AUTO, "--json");
    expect(code).toBe(EXIT_OK);
    const report = JSON.parse(stdout) as { allocation: { links: unknown[]; sessions: unknown[] } };
    expect(report.allocation.links).toContainEqual({
      network: "ip",
      link: "r-h2",
      member: "r",
      ident: 2,
      allocated: true,
    });
    expect(report.allocation.links).toHaveLength(8);
    expect(report.allocation.sessions).toEqual([
      { network: "lanA", member: "h1", name: "to-r", session: 1, allocated: true },
      { network: "lanA", member: "r", name: "to-h1", session: 1, allocated: true },
      { network: "lanB", member: "h2", name: "to-r", session: 1, allocated: true },
      { network: "lanB", member: "r", name: "to-h2", session: 1, allocated: true },
    ]);
  });

  test("a bad description: every error on its own line, exit 2", async () => {
    expect(await run(BAD)).toEqual({
      code: EXIT_BAD_INPUT,
      stdout: "",
      stderr:
        `strata: ${BAD}: 6:19 networks.lan.members.h2.name: 02:00:00:00:00:01 is already the name of h1 (member ` +
        `names (addresses) are unique in a network)\n` +
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
        {
          file: BAD,
          line: 8,
          column: 33,
          path: "networks.lan.links[0].mdoe",
          problem: "unknown key 'mdoe'",
          fix: "did you mean 'mode'?",
        },
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
    expect(stderr).toBe(
      `strata: ${path}: 7:21 networks.lan.tables.a.forward: kind exact cannot hold these rows: their patterns ` +
        `need lpm (write kind: lpm, or leave kind out)\n`,
    );
  });

  test("a missing file: one line, exit 2", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await run(missing)).toEqual({
      code: EXIT_BAD_INPUT,
      stdout: "",
      stderr:
        `strata: ${missing}: cannot read file: no such file (give the path of a .yaml or .json network ` +
        `description)\n`,
    });
  });

  test("no argument: usage error, exit 2", async () => {
    const { code, stderr } = await run();
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stderr).toContain("missing required argument 'spec'");
  });
});

describe("strata check: what is not a description is one short line, exit 2, with bounded memory", () => {
  const MIB = 1024 * 1024;
  const file = (name: string, bytes: Buffer | string): string => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  // A one-line description of `len` bytes: a key whose value is one long scalar.
  const oneLine = (name: string, len: number): string =>
    file(name, `networks: ${"a".repeat(len - "networks: ".length)}`);
  const longValue = /networks: must be a map from network name to network, got 'a{59}…'$/;

  test.each([
    {
      name: "/dev/zero",
      path: () => "/dev/zero",
      problem:
        /: this is not a text file: byte 0 is a NUL \(give the path of a \.yaml or \.json network description\)$/,
    },
    {
      name: "a pcap capture",
      path: () => "pcaps/example-hub-h1.pcap",
      problem: /: this is not a text file: it looks like a pcap capture \(/,
    },
    {
      name: "a pcapng capture",
      path: () => "pcaps/pcapngtg_le_test202.pcapng",
      problem: /: this is not a text file: it looks like a pcapng capture \(/,
    },
    {
      name: "a PNG image",
      path: () => file("x.png", Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")),
      problem: /: this is not a text file: it looks like a PNG image \(/,
    },
    {
      name: "a NUL in text",
      path: () => file("nul.yaml", "networks:\n  a\0b: {}\n"),
      problem: /: this is not a text file: byte 13 is a NUL \(/,
    },
    {
      name: "text that is not UTF-8",
      path: () => file("latin1.yaml", Buffer.from("networks:\n  caf\xe9: {}\n", "latin1")),
      problem: /: this is not a text file: it is not UTF-8 \(save the description as UTF-8\)$/,
    },
    {
      name: "UTF-16 text",
      path: () => file("utf16.yaml", Buffer.from("\ufeffnetworks: {}\n", "utf16le")),
      problem: /: this is UTF-16 text \(save the description as UTF-8\)$/,
    },
    {
      name: "a 50 MB single line",
      path: () => oneLine("50mb.yaml", 50 * MIB),
      problem: /: the file is larger than 16 MiB, the most a description may be \(.*see docs\/spec\.md\)$/,
    },
    {
      name: "one byte over the limit",
      path: () => oneLine("over.yaml", 16 * MIB + 1),
      problem: /: the file is larger than 16 MiB/,
    },
    {
      name: "exactly the limit: read, and its value quoted short",
      path: () => oneLine("at.yaml", 16 * MIB),
      problem: longValue,
    },
    { name: "one byte under the limit", path: () => oneLine("under.yaml", 16 * MIB - 1), problem: longValue },
    {
      name: "long keys and values",
      path: () =>
        file(
          "long.json",
          JSON.stringify({
            networks: {
              [`n\n${"k".repeat(5000)}`]: { header: "h".repeat(5000), members: {} },
              ["x".repeat(5000)]: { header: "ethernet", members: { a: { name: 1 } }, [`bogus${"y".repeat(5000)}`]: 1 },
            },
          }),
        ),
      problem: /networks\["n\\nk{29}…"\]: 'n\\nk{57}…' is not allowed as a key here/,
    },
  ])("$name", async ({ path, problem }) => {
    const before = process.memoryUsage().rss;
    const { code, stdout, stderr } = await run(path());
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * MIB);
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stdout).toBe("");
    const lines = stderr.split("\n").slice(0, -1);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(/^strata: /);
      expect(line.length).toBeLessThan(300);
    }
    expect(lines[0]).toMatch(problem);
  });

  afterAll(() => {
    for (const name of ["50mb.yaml", "over.yaml", "at.yaml", "under.yaml"]) rmSync(join(dir, name), { force: true });
  });
});

// A link that is refused is one line: rows that name it, in its network and in those it reaches,
// are not checked against the links left (which would call its identifiers unknown, falsely).
describe("strata check: one refused shared link, one line", () => {
  /**
   * A tenant LAN whose gw shares core's link gw.2 ↔ mb.1 (examples/subduction), with `link` in
   * its place, tenant.gw named `gwName`, tenant of design `tenantHeader`, and `more` networks.
   * Both gw's rows use the shared link: in: 2, out: 2, do: shared, out: shared, in: shared.
   */
  const subducted = (
    link: string,
    { gwName = '"02:00:00:00:00:fe"', tenantHeader = "ethernet", t1Name = '"02:00:00:00:00:01"', more = "" } = {},
  ): string => `networks:
  tenant:
    header: ${tenantHeader}
    members:
      t1: { name: ${t1Name} }
      gw: { name: ${gwName} }
    links: [ { from: t1.1, to: gw.1, mode: two-way } ]
    tables:
      gw:
        acquire: [ { in: 2, do: forward }, { in: 1, do: forward } ]
        forward: [ { in: 1, out: shared }, { in: 2, out: 1 } ]
  core:
    header: ethernet
    members:
      gw: { name: "02:00:00:00:00:fe" }
      mb: { name: "02:00:00:00:00:fd" }
      h2: { name: "02:00:00:00:00:02" }
    links: [ ${link}, { from: gw.3, to: h2.1, mode: two-way } ]
    tables:
      gw:
        acquire: [ { in: 2, do: shared }, { in: 3, do: forward } ]
        forward: [ { in: shared, out: 2 }, { in: 3, out: 2 } ]
${more}`;
  const SHARED = "{ from: gw.2, to: mb.1, mode: two-way, shared: tenant }";
  const third = `  third:
    header: ethernet
    members:
      gw: { name: "02:00:00:00:00:fe" }
      x: { name: "02:00:00:00:00:09" }
    links: [ { from: gw.7, to: x.1, mode: two-way, shared: tenant } ]
    tables:
      gw:
        acquire: [ { in: 7, do: shared } ]
        forward: [ { in: shared, out: 7 } ]
`;

  test.each([
    { name: "a valid shared link", text: subducted(SHARED), lines: [] },
    {
      name: "a shared group link",
      text: subducted("{ from: gw.2, to: [mb.1, h2.2], mode: allcast, group: g, shared: tenant }"),
      lines: [
        "18:79 networks.core.links[0].shared: a shared link is a point-to-point " +
          "link between two members of this network (a shared link cannot be a " +
          "group link, external or bridging (seed §5.3.1); remove shared, or make " +
          "it one-way or two-way inside the network)",
      ],
    },
    {
      name: "shared members whose names differ",
      text: subducted(SHARED, { gwName: '"02:00:00:00:00:fc"' }),
      lines: [
        "18:14 networks.core.links[0]: no member of tenant has the name and " +
          "machine of an end of shared link gw.2-mb.1 (the shared members are one " +
          "member of core and one of tenant with the same name on the same " +
          "machine, at exactly one end of the link)",
      ],
    },
    {
      name: "networks of two designs",
      text: subducted(SHARED, { tenantHeader: "cna", gwName: "254", t1Name: "1" }),
      lines: [
        "18:14 networks.core.links[0]: shared link gw.2-mb.1: core is ethernet " +
          "and tenant is cna; bridged and subducted networks have one header " +
          "design (join networks of one design, or layer one on the other)",
      ],
    },
    {
      name: "a member shared three ways",
      text: subducted(SHARED, { more: third }),
      lines: [
        "28:14 networks.third.links[0]: tenant.gw is already shared with core; " +
          "with third.gw it would be shared among three networks (a member is " +
          "shared with at most one other network (seed §5.3.2))",
      ],
    },
    {
      name: "shared with a network that does not exist",
      text: subducted("{ from: gw.2, to: mb.1, mode: two-way, shared: tenat }"),
      lines: [
        "18:14 networks.core.links[0]: shared link gw.2-mb.1: there is no " +
          "network 'tenat' (did you mean 'tenant'? networks: tenant, core)",
      ],
    },
  ])("$name", async ({ text, lines }) => {
    const path = join(dir, "refused.yaml");
    writeFileSync(path, text);
    const { code, stderr } = await run(path);
    expect(stderr.split("\n").slice(0, -1)).toEqual(lines.map((l) => `strata: ${path}: ${l}`));
    expect(code).toBe(lines.length === 0 ? EXIT_OK : EXIT_BAD_INPUT);
  });
});
