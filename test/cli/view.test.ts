// `strata view` from the command line: the page it writes (every network, member and link
// drawn), and bad input of every kind as one line and exit 2, with nothing written.

import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";

const root = new URL("../..", import.meta.url).pathname;
const VXLAN = join(root, "examples/vxlan/network.yaml");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

let tmp = "";
let out = "";
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "strata-view-"));
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
      const drawn = (attr: string): string[] => [...new Set([...text.matchAll(new RegExp(`<g class="[^"]*" ${attr}="([^"]+)"`, "g"))].map((m) => m[1] ?? ""))].sort();
      expect(drawn("data-network")).toEqual(compiled.networks.map((n) => n.name).sort());
      expect(drawn("data-link")).toEqual([...new Set(compiled.links.map((l) => l.capture))].sort());
      expect([...text.matchAll(/data-member="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(compiled.members.map((m) => m.qualified).sort());
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

describe("strata view: bad input is one line and exit 2, and nothing is written", () => {
  const cases: { name: string; args: () => string[]; error: RegExp; setup?: () => void }[] = [
    { name: "no --out", args: () => ["view", VXLAN], error: /^strata: required option '--out <page\.html>' not specified/ },
    { name: "--out is the description", args: () => ["view", VXLAN, "--out", VXLAN], error: /--out names an input of strata view/ },
    { name: "--out is a directory", args: () => ["view", VXLAN, "--out", out], error: /--out is a directory \(name a file in it, e\.g\. .*page\.html\)/ },
    {
      name: "--out is a symbolic link",
      setup: () => symlinkSync(join(out, "elsewhere.html"), join(out, "link.html")),
      args: () => ["view", VXLAN, "--out", join(out, "link.html")],
      error: /--out is a symbolic link and strata never writes through one/,
    },
    {
      name: "--out is a file strata view did not write",
      setup: () => writeFileSync(join(out, "notes.html"), "<p>mine</p>"),
      args: () => ["view", VXLAN, "--out", join(out, "notes.html")],
      error: /--out is already there and strata view did not write it \(strata replaces only files it wrote/,
    },
    {
      name: "a description with an error",
      setup: () => writeFileSync(join(out, "bad.yaml"), "networks:\n  lan:\n    header: ethernet\n    members:\n      h1: { name: nope }\n"),
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
  });
});
