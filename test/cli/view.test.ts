// `strata view` from the command line: the page it writes (every network, member and link
// drawn), the packets of a run as `strata trace` shows them, and bad input of every kind as
// one line and exit 2, with nothing written.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import type { AnalysisReport } from "../../src/analysis/properties.js";
import type { Finding, RouteAnswer } from "../../src/analysis/queries.js";
import { packetLines, pageDataOf } from "../view/page-helpers.js";
import { xmlProblem } from "../view/xml-check.js";

const root = new URL("../..", import.meta.url).pathname;
const VXLAN = join(root, "examples/vxlan/network.yaml");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const VXLAN_IN = [
  "--in",
  `lan:tap=${join(root, "pcaps/vxlan.pcap")}`,
  "--in",
  `tenant:vm3=${join(root, "pcaps/example-vxlan-vm3.pcap")}`,
];
const HUB_IN = [
  "--in",
  `lan:h1.1=${join(root, "pcaps/example-hub-h1.pcap")}`,
  "--in",
  `lan:h3.1=${join(root, "pcaps/example-hub-h3.pcap")}`,
];

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

let tmp = "";
let out = "";
// Runs made once for the file: vxlan traced, hub-and-spoke traced in part.
let vxlanRun = "";
let hubPartRun = "";
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "strata-view-"));
  vxlanRun = join(tmp, "vxlan-run");
  hubPartRun = join(tmp, "hub-part");
  expect((await strata("run", VXLAN, ...VXLAN_IN, "--out", vxlanRun, "--trace")).code).toBe(0);
  expect((await strata("run", HUB, ...HUB_IN, "--out", hubPartRun, "--trace-packets", "1")).code).toBe(0);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
beforeEach(() => {
  out = mkdtempSync(join(tmp, "out-"));
});

describe("strata view: the page and the SVG", () => {
  it("draws every network, member and link of the description", async () => {
    const page = join(out, "page.html");
    const r = await strata("view", VXLAN, "--out", page);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^wrote .*page\.html \([\d,]+ bytes\): 3 networks, 7 members, 5 links\n$/);
    const compiled = compile(loadSpec(VXLAN));
    for (const text of [readFileSync(page, "utf8")]) {
      const drawn = (attr: string): string[] =>
        [
          ...new Set([...text.matchAll(new RegExp(`<g class="[^"]*" ${attr}="([^"]+)"`, "g"))].map((m) => m[1] ?? "")),
        ].sort();
      expect(drawn("data-network")).toEqual(compiled.networks.map((n) => n.name).sort());
      expect(drawn("data-link")).toEqual([...new Set(compiled.links.map((l) => l.qualified))].sort());
      expect([...text.matchAll(/data-member="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(
        compiled.members.map((m) => m.qualified).sort(),
      );
    }
    // Self-contained: nothing is fetched.
    const html = readFileSync(page, "utf8");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/);
  });

  it("replaces a page it wrote, and nothing else", async () => {
    const page = join(out, "page.html");
    expect((await strata("view", HUB, "--out", page)).code).toBe(0);
    expect((await strata("view", VXLAN, "--out", page)).code).toBe(0);
    expect(readFileSync(page, "utf8")).toContain('data-network="tenant"');
    expect(existsSync(join(out, `.${process.pid}.strata-view.tmp`))).toBe(false);
  });
});

describe("strata view --svg: the topology alone, for papers", () => {
  const cases: { name: string; args: () => string[]; widths: boolean; page: boolean }[] = [
    {
      name: "--svg alone: the description",
      args: () => ["view", VXLAN, "--svg", join(out, "t.svg")],
      widths: false,
      page: false,
    },
    {
      name: "--svg with --run: links as wide as the packets they carried",
      args: () => ["view", VXLAN, "--run", vxlanRun, "--svg", join(out, "t.svg")],
      widths: true,
      page: false,
    },
    {
      name: "--svg beside --out: both written from one layout",
      args: () => ["view", VXLAN, "--run", vxlanRun, "--out", join(out, "p.html"), "--svg", join(out, "t.svg")],
      widths: true,
      page: true,
    },
  ];
  it.each(cases)("$name", async ({ args, widths, page }) => {
    const r = await strata(...args());
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/wrote .*t\.svg \([\d,]+ bytes\): 3 networks, 7 members, 5 links/);
    const svg = readFileSync(join(out, "t.svg"), "utf8");
    const [xml, mark, open] = svg.split("\n");
    expect(xml).toBe('<?xml version="1.0" encoding="UTF-8"?>');
    expect(mark).toMatch(/^<!-- written by strata view from .*vxlan\/network\.yaml -->$/);
    expect(open).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).not.toMatch(/<script|<html/);
    const compiled = compile(loadSpec(VXLAN));
    const drawn = (attr: string): string[] =>
      [
        ...new Set([...svg.matchAll(new RegExp(`<g class="[^"]*" ${attr}="([^"]+)"`, "g"))].map((m) => m[1] ?? "")),
      ].sort();
    expect(drawn("data-network")).toEqual(compiled.networks.map((n) => n.name).sort());
    expect(drawn("data-link")).toEqual([...new Set(compiled.links.map((l) => l.qualified))].sort());
    expect(svg.includes('stroke-width="')).toBe(widths);
    expect(existsSync(join(out, "p.html"))).toBe(page);
    if (page)
      expect(readFileSync(join(out, "p.html"), "utf8")).toContain(
        svg.slice(svg.indexOf("<svg "), svg.indexOf("</svg>")),
      );
    // Written again over itself: strata view replaces an SVG it wrote.
    expect((await strata(...args())).code).toBe(0);
  });
});

describe("strata view --svg: well-formed XML, whatever the description's path holds", () => {
  // The path is in the file's first comment and in its title; XML allows no "--" in a comment,
  // and no control character anywhere.
  it.each([
    { name: "three hyphens", dir: "a---b" },
    { name: "two hyphens", dir: "a--b" },
    { name: "hyphens at the end of a name", dir: "ends--" },
    { name: "markup characters", dir: "<a & 'b'>" },
    { name: "a control character", dir: "bell\x07" },
  ])("$name: $dir", async ({ dir }) => {
    const spec = join(out, dir, "network.yaml");
    mkdirSync(join(out, dir));
    writeFileSync(spec, readFileSync(HUB));
    const [svg, page] = [join(out, "t.svg"), join(out, "p.html")];
    expect(await strata("view", spec, "--svg", svg, "--out", page)).toMatchObject({ code: 0, stderr: "" });
    const text = readFileSync(svg, "utf8");
    expect(xmlProblem(text)).toBeUndefined();
    expect(text.split("\n")[1]).toMatch(/^<!-- written by strata view from .+ -->$/);
    // The page's drawing is the same SVG, and the page keeps its mark.
    const html = readFileSync(page, "utf8");
    expect(xmlProblem(html.slice(html.indexOf("<svg "), html.indexOf("</svg>") + "</svg>".length))).toBeUndefined();
    expect((await strata("view", spec, "--svg", svg, "--out", page)).code).toBe(0);
  });
});

describe("strata view --run: a replay's packets, as strata trace shows them", () => {
  it("holds every packet's path, line for line what `strata trace --packet N` prints", async () => {
    const page = join(out, "page.html");
    const r = await strata("view", VXLAN, "--run", vxlanRun, "--out", page);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/15 packets\n$/);
    const data = pageDataOf(readFileSync(page, "utf8"));
    expect(data.run?.packets).toEqual({ injected: 15, copies: 0, delivered: 15, dropped: 0, exited: 0 });
    expect(data.run?.links["overlay.a.1-b.1"]).toEqual({ packets: 5, bytes: 614 });
    for (let packet = 0; packet < 15; packet++) {
      const shown = await strata("trace", vxlanRun, "--packet", String(packet));
      expect(packetLines(data, packet)?.lines.join("\n")).toBe(shown.stdout.trimEnd());
    }
  });

  it("keeps the bytes at each hop, decoded, for the packets --bytes names", async () => {
    const page = join(out, "page.html");
    expect((await strata("view", VXLAN, "--run", vxlanRun, "--out", page, "--bytes", "10")).code).toBe(0);
    const bytes = pageDataOf(readFileSync(page, "utf8")).run?.trace?.bytes;
    expect(bytes?.packets).toBe("10");
    expect(Object.keys(bytes?.steps ?? {})).toEqual(["10"]);
    const steps = pageDataOf(readFileSync(page, "utf8")).run?.trace?.steps ?? [];
    const lines = packetLines(pageDataOf(readFileSync(page, "utf8")), 10)?.steps ?? [];
    // Packet 10: vm3's frame crosses the tenant link, overlay.a pushes VXLAN, lan.a pushes Ethernet; b pops both.
    const shown = (bytes?.steps["10"] ?? []).flatMap((v, k) => {
      const view = bytes?.views[v];
      if (view === undefined) return [];
      const layers = view.layers.map((l) => l.design).join(" ");
      return [`${lines[k]?.step} ${view.what}: ${layers}${view.only ? " (first)" : ""}`];
    });
    expect(shown).toEqual([
      "link crossed tenant.vm3.1-vm5.1: ethernet ipv4",
      "push pushed by overlay.a: vxlan ethernet ipv4 (first)",
      "link crossed overlay.a.1-b.1: vxlan ethernet ipv4",
      "push pushed by lan.a: ethernet vxlan ethernet ipv4 (first)",
      "link crossed lan.a.1-sw.1: ethernet vxlan ethernet ipv4",
      "link crossed lan.b.1-sw.2: ethernet vxlan ethernet ipv4",
      "pop popped by lan.b: ethernet vxlan ethernet ipv4 (first)",
      "pop popped by overlay.b: vxlan ethernet ipv4 (first)",
      "deliver delivered to tenant.vm5: ethernet ipv4",
    ]);
    expect(steps.length).toBeGreaterThan(0);
  });

  it("says why it shows no bytes where the trace does not hold every packet of a link", async () => {
    const page = join(out, "page.html");
    const r = await strata("view", HUB, "--run", hubPartRun, "--out", page);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/note: Bytes at lan\.h1\.1-hub\.1 are not shown: the trace has 1 of its 6 packets/);
    const data = pageDataOf(readFileSync(page, "utf8"));
    expect(data.run?.trace?.count).toBe(1);
    expect(packetLines(data, 1)?.lines.join("\n")).toBe(
      (await strata("trace", hubPartRun, "--packet", "1")).stdout.trimEnd(),
    );
  });

  it("without a trace, draws the counts and says how to browse packets", async () => {
    const run = join(tmp, "hub-untraced");
    expect((await strata("run", HUB, ...HUB_IN, "--out", run)).code).toBe(0);
    const page = join(out, "page.html");
    const r = await strata("view", HUB, "--run", run, "--out", page);
    expect(r.stdout).toMatch(/note: .*has no trace: replay with `strata run … --trace` to browse its packets here/);
    const html = readFileSync(page, "utf8");
    expect(html).toMatch(
      new RegExp(
        String.raw`<g class="link physical two-way" data-link="lan\.h1\.1-hub\.1">` +
          String.raw`<path class="seg" data-seg="0" d="[^"]+" stroke-width="7"`,
      ),
    );
    expect(pageDataOf(html).run?.trace).toBeUndefined();
  });
});

describe("strata view: bad input is one line and exit 2, and nothing is written", () => {
  const cases: { name: string; args: () => string[]; error: RegExp; setup?: () => void }[] = [
    {
      name: "neither --out nor --svg",
      args: () => ["view", VXLAN],
      error: /^strata: give --out PAGE\.html for the page, --svg FILE\.svg for the topology alone, or both/,
    },
    {
      name: "--out and --svg name one file",
      args: () => ["view", VXLAN, "--out", join(out, "p.html"), "--svg", join(out, "p.html")],
      error: /--out and --svg name one file, .*p\.html: give each its own/,
    },
    {
      name: "--svg is a file strata view did not write",
      setup: () => writeFileSync(join(out, "figure.svg"), "<svg/>"),
      args: () => ["view", VXLAN, "--out", join(out, "p.html"), "--svg", join(out, "figure.svg")],
      error: /figure\.svg: --svg is already there and strata view did not write it/,
    },
    {
      name: "--svg is a directory",
      args: () => ["view", VXLAN, "--svg", out],
      error: /--svg is a directory \(name a file in it, e\.g\. .*topology\.svg\)/,
    },
    {
      name: "--out is the description",
      args: () => ["view", VXLAN, "--out", VXLAN],
      error: /--out names an input of strata view/,
    },
    {
      name: "--out is a run's own file",
      args: () => ["view", VXLAN, "--run", vxlanRun, "--out", join(vxlanRun, "summary.json")],
      error: /--out names an input of strata view, .*summary\.json/,
    },
    {
      name: "--out is a directory",
      args: () => ["view", VXLAN, "--out", out],
      error: /--out is a directory \(name a file in it, e\.g\. .*page\.html\)/,
    },
    {
      name: "--out is a file strata view did not write",
      setup: () => writeFileSync(join(out, "notes.html"), "<p>mine</p>"),
      args: () => ["view", VXLAN, "--out", join(out, "notes.html")],
      error: /--out is already there and strata view did not write it \(strata replaces only files it wrote/,
    },
    {
      name: "--out is a symbolic link",
      setup: () => symlinkSync(join(out, "elsewhere.html"), join(out, "link.html")),
      args: () => ["view", VXLAN, "--out", join(out, "link.html")],
      error: /--out is a symbolic link and strata never writes through one/,
    },
    {
      name: "a bad --bytes",
      args: () => ["view", VXLAN, "--out", join(out, "p.html"), "--bytes", "5-3"],
      error: /--bytes 5-3: 5-3 ends before it starts/,
    },
    {
      name: "--run with no summary",
      args: () => ["view", VXLAN, "--run", out, "--out", join(out, "p.html")],
      error: /summary\.json: cannot read it: no such file \(give the output directory of `strata run`/,
    },
    {
      name: "--run of another description",
      args: () => ["view", HUB, "--run", vxlanRun, "--out", join(out, "p.html")],
      error: new RegExp(
        String.raw`summary\.json: links: no link lan\.a\.1-sw\.1 in .*hub-and-spoke/network\.yaml ` +
          String.raw`\(the run was made with another description`,
      ),
    },
    {
      name: "a summary edited by hand",
      setup: () => {
        mkdirSync(join(out, "run"));
        writeFileSync(join(out, "run", "summary.json"), '{"spec": "x", "packets": {"injected": -1}}');
      },
      args: () => ["view", VXLAN, "--run", join(out, "run"), "--out", join(out, "p.html")],
      error: /summary\.json: packets: packets must be counts of packets injected/,
    },
    {
      name: "a trace edited by hand, the summary without digests (an older strata's)",
      setup: () => {
        mkdirSync(join(out, "run"));
        const summary = JSON.parse(readFileSync(join(vxlanRun, "summary.json"), "utf8")) as { crc32?: unknown };
        delete summary.crc32;
        writeFileSync(join(out, "run", "summary.json"), JSON.stringify(summary));
        writeFileSync(join(out, "run", "trace.jsonl"), '{"packet": 0}\n');
      },
      args: () => ["view", VXLAN, "--run", join(out, "run"), "--out", join(out, "p.html")],
      error: /trace\.jsonl: line 1: missing key 'endpoint' \(the file was cut or edited; replay again\)/,
    },
    {
      name: "a description with an error",
      setup: () =>
        writeFileSync(
          join(out, "bad.yaml"),
          "networks:\n  lan:\n    header: ethernet\n    members:\n      h1: { name: nope }\n",
        ),
      args: () => ["view", join(out, "bad.yaml"), "--out", join(out, "p.html")],
      error: /bad\.yaml: 5:\d+ networks\.lan\.members\.h1\.name/,
    },
  ];
  it.each(cases)("$name", async ({ args, error, setup }) => {
    setup?.();
    const r = await strata(...args());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(error);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(join(out, "p.html"))).toBe(false);
    expect(existsSync(join(out, "p.svg"))).toBe(false);
  });
});

describe("strata view --analysis: the page holds strata analyze's report", () => {
  const cases = [
    { name: "ip-router", spec: join(root, "examples/ip-router/network.yaml") },
    { name: "a loop", spec: join(root, "test/fixtures/analysis/loop.yaml") },
    { name: "black holes", spec: join(root, "test/fixtures/analysis/black-hole.yaml") },
  ];
  it.each(cases)("$name: matrices, properties, loops and black holes as strata analyze --json says", async (c) => {
    const page = join(out, "page.html");
    expect(await strata("view", c.spec, "--analysis", "--out", page)).toMatchObject({ code: 0, stderr: "" });
    const a = pageDataOf(readFileSync(page, "utf8")).analysis;
    if (a === undefined) throw new Error("the page has no analysis");
    const rep = JSON.parse((await strata("analyze", c.spec, "--json")).stdout) as AnalysisReport;
    expect(a.ok).toBe(rep.ok);
    expect(a.classes).toEqual(rep.classes);
    expect(a.properties).toEqual([rep.layering, ...rep.inclusions]);
    expect(a.components.map((x) => x.name)).toEqual(rep.components.map((x) => x.name));
    for (const [k, x] of a.components.entries()) {
      expect(x.properties).toEqual(rep.components[k]?.properties);
      const reached = x.classes.flatMap((row, i) => row.filter((n, j) => i !== j && n > 0)).length;
      expect(reached).toBe(rep.components[k]?.reachable.pairs);
      expect(x.reachable).toEqual({ pairs: rep.components[k]?.reachable.pairs, of: rep.components[k]?.reachable.of });
    }
    // Each pair of a network: reachable in the matrix exactly when --from/--to finds a header class that gets there.
    const nodes = pageDataOf(readFileSync(page, "utf8")).nodes;
    const name = (id: string): string => (nodes[id]?.member ?? "").replace(".", ":");
    for (const x of a.components.filter((y) => y.kind === "network"))
      for (const [i, m0] of x.members.entries())
        for (const [j, m1] of x.members.entries()) {
          if (i === j) continue;
          const r = await strata("analyze", c.spec, "--from", name(m0), "--to", name(m1), "--json");
          const route = (JSON.parse(r.stdout) as { route: RouteAnswer }).route;
          expect({ pair: `${m0}.${m1}`, reached: (x.classes[i]?.[j] ?? 0) > 0 }).toEqual({
            pair: `${m0}.${m1}`,
            reached: route.reach.length > 0,
          });
          const drawn = x.routes[`${i}.${j}`];
          if (route.reach.length > 0) expect(route.reach.map((p) => p.path)).toContain(drawn?.path);
        }
    const found = JSON.parse((await strata("analyze", c.spec, "--loops", "--black-holes", "--json")).stdout) as {
      loops: Finding[];
      blackHoles: Finding[];
    };
    expect(a.findings.map(({ component, header, at, path }) => ({ component, header, at, path }))).toEqual([
      ...found.loops,
      ...found.blackHoles,
    ]);
    for (const f of a.findings) expect(f.steps.map((s) => s.text).join(" → ")).toBe(f.path);
  });
});
