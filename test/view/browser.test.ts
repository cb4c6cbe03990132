// strata view's page in a real browser (Debian's chromium through puppeteer-core, one browser
// for the file, pages opened in turn): for every example under examples/, its page — built from
// a `strata run --trace` of the example's own inputs — draws every network, member and link of
// the description, and a packet clicked in the list is drawn along the links and members its
// trace names, step by step with the lines `strata trace --packet N` prints. A packet can be
// chosen by keyboard too. With STRATA_VIEW_SHOTS=1 a screenshot of each example's page (its
// longest path drawn) is kept in test-artifacts/view/ (nothing compares them: they are for
// people, and took a fifth of each example's time); UPDATE_GOLDENS=1 takes them too and
// rewrites the README's docs/img/vxlan-view.png.
// Without a browser the tests are skipped, saying why; with STRATA_REQUIRE_BROWSER=1 (.ci/run)
// they fail instead.

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { KeyInput, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import type { TraceLine } from "../../src/engine/trace.js";
import { PcapWriter } from "../../src/pcap/pcap-writer.js";
import { BROWSER_REQUIRED, findBrowser, launch } from "../../bench/browser.js";
import { hubSpec, mac } from "../../bench/dataplane.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const root = new URL("../..", import.meta.url).pathname;
const ARTIFACTS = join(root, "test-artifacts", "view");
const README_IMAGE = join(root, "docs", "img", "vxlan-view.png");
/** Packets clicked per example: all of a small example's, an even sample of a larger one's. */
const PACKETS_PER_EXAMPLE = 12;
const VIEWPORT = { width: 1440, height: 900 };

const found = findBrowser();
const examples = [...REPLAY_EXAMPLES];

/** One browser for the whole file, started on first use; each group of tests opens its own page in it. */
let started: Promise<Awaited<ReturnType<typeof launch>>> | undefined;
async function newPage(): Promise<Page> {
  started ??= launch((found as { executable: string }).executable);
  const page = await (await started).browser.newPage();
  await page.setViewport(VIEWPORT);
  return page;
}
afterAll(async () => {
  await (await started)?.close();
});

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

/** A path as short as it can be said from here: the page's title shows the files it was made from. */
const near = (file: string): string => (file.startsWith(process.cwd()) ? relative(process.cwd(), file) : file);

/** Screenshots are taken for people to look at, when asked for: nothing here compares them. */
const SHOTS = process.env["STRATA_VIEW_SHOTS"] === "1" || process.env["UPDATE_GOLDENS"] === "1";
async function screenshot(page: Page, path: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path });
}

/** Each example's page, built once for the file: vxlan's is opened by three groups of tests. */
const pages = new Map<string, Promise<{ spec: string; run: string; page: string }>>();
function buildPage(name: string): Promise<{ spec: string; run: string; page: string }> {
  const page = pages.get(name) ?? makePage(name);
  pages.set(name, page);
  return page;
}

/**
 * Replays an example's bundled inputs with a trace and writes its page, both kept in
 * test-artifacts/view/ beside the screenshot: the run's directory and the page.
 */
async function makePage(name: string): Promise<{ spec: string; run: string; page: string }> {
  const dir = join(root, "examples", name);
  const example = JSON.parse(readFileSync(join(dir, "example.json"), "utf8")) as { inputs: string[] };
  const spec = near(join(dir, "network.yaml"));
  const run = near(join(ARTIFACTS, `${name}-run`));
  const page = join(ARTIFACTS, `${name}.html`);
  const inputs = example.inputs.flatMap((i) => ["--in", i.replace("=pcaps/", `=${near(join(root, "pcaps"))}/`)]);
  const replay = await strata("run", spec, ...inputs, "--out", run, "--trace");
  expect(replay.stderr).toBe("");
  expect(replay.code).toBe(0);
  const view = await strata("view", spec, "--run", run, "--out", page);
  expect(view.stderr).toBe("");
  expect(view.code).toBe(0);
  return { spec, run, page };
}

/**
 * Opens a page and waits for its script to mark it ready (data-ready on <html>, set once its data is unpacked and
 * drawn): an observer in the page tells, where waitForSelector polls from a script puppeteer first puts in each page
 * (~80 ms an open of the ~25 here, AMD EPYC, 2 vCPU). An error in the page's script fails the open at once.
 */
async function open(page: Page, file: string): Promise<void> {
  await page.goto(pathToFileURL(file).href, { waitUntil: "domcontentloaded" });
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const root = document.documentElement;
        const done = (): boolean => root.dataset["ready"] !== undefined && (resolve(), true);
        if (done()) return;
        new MutationObserver((_, o) => done() && o.disconnect()).observe(root, { attributeFilter: ["data-ready"] });
        addEventListener("error", (e) => reject(new Error(`the page's script: ${e.message}`)));
        addEventListener("unhandledrejection", (e) => reject(new Error(`the page's script: ${String(e.reason)}`)));
      }),
  );
}

/**
 * Clicks what `selector` finds as a person would — scrolled into view, at its middle, on whatever is topmost there,
 * which must be it or inside it — but in the page, in one round trip: page.click takes seven (query, scroll, boxes,
 * mouse moved, pressed, released), ~35 ms against ~8 (AMD EPYC, 2 vCPU), and the tests click ~180 times. The page
 * listens for click, not for the pointer's other events (those move the drawing); each group still clicks with the
 * mouse too.
 */
async function click(page: Page, selector: string): Promise<void> {
  const missed = await page.evaluate((selector) => {
    const target = document.querySelector(selector);
    if (target === null) return `nothing matches ${selector}`;
    target.scrollIntoView({ block: "nearest", inline: "nearest" });
    const r = target.getBoundingClientRect();
    const [x, y] = [r.left + r.width / 2, r.top + r.height / 2];
    const hit = document.elementFromPoint(x, y);
    if (hit === null || !target.contains(hit))
      return `${selector} is under ${hit?.outerHTML.slice(0, 80) ?? "nothing"}`;
    const init = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, view: window };
    hit.dispatchEvent(new MouseEvent("click", init));
    return "";
  }, selector);
  expect(missed).toBe("");
}

/** What the page shows of the packet it draws: its lines, and the links and members marked on the drawing. */
async function drawnPath(
  page: Page,
): Promise<{ packet: string | null; lines: string[]; links: string[]; members: string[] }> {
  return page.evaluate(() => {
    const attrs = (selector: string, attr: string): string[] =>
      [...new Set([...document.querySelectorAll(selector)].map((e) => e.getAttribute(attr) ?? ""))].sort();
    return {
      packet: document.documentElement.dataset["shownPacket"] ?? null,
      lines: [...document.querySelectorAll("#path ol.steps > li")].map((li) => li.textContent ?? ""),
      // A link is drawn as part of the path when at least one of its segments is.
      links: attrs(".strata-topology.tracing g.link.hop:has(path.seg.hop)", "data-link"),
      members: attrs(".strata-topology.tracing g.node.member.hop", "data-member"),
    };
  });
}

/** The links and members a packet's trace line names: what its drawn path must cover, no more, no less. */
function pathOf(line: TraceLine): { links: string[]; members: string[] } {
  const links = new Set<string>();
  const members = new Set<string>();
  for (const s of line.steps) {
    const step = s as unknown as Record<string, unknown>;
    if ((s.step === "link" || s.step === "exit") && typeof step["link"] === "string") links.add(step["link"]);
    for (const key of ["member", "from", ...(s.step === "handoff" ? ["to"] : [])]) {
      const v = step[key];
      if (typeof v === "string") members.add(v);
    }
  }
  return { links: [...links].sort(), members: [...members].sort() };
}

/** Up to `n` packets spread evenly over the trace. */
function sample(lines: readonly TraceLine[], n: number): TraceLine[] {
  if (lines.length <= n) return [...lines];
  return Array.from({ length: n }, (_, k) => lines[Math.round((k * (lines.length - 1)) / (n - 1))] as TraceLine);
}

describe("strata view in a real browser", () => {
  const why = "missing" in found ? ` (${BROWSER_REQUIRED ? "required, missing" : "skipped"}: ${found.missing})` : "";
  it.skipIf(!BROWSER_REQUIRED && "missing" in found)(`a browser is there${why}`, () => {
    expect("missing" in found ? found.missing : "").toBe("");
  });
});

describe.skipIf("missing" in found)(
  `strata view's pages in chromium${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    let page: Page;
    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      page = await newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      afterAll(() => expect(errors).toEqual([]));
    });
    afterAll(async () => {
      await page.close();
    });

    it.each(examples)(
      "example %s: every network, member and link drawn, and packets' paths as strata trace shows them",
      async (name) => {
        const { spec, run, page: file } = await buildPage(name);
        await open(page, file);

        // Drawn: each element of the description is there, has a size, and lies inside the canvas once fitted.
        const compiled = compile(loadSpec(spec));
        const drawn = await page.evaluate(() => {
          const canvas = (document.getElementById("canvas") as HTMLElement).getBoundingClientRect();
          // A straight line has no width or no height, not neither.
          const inside = (e: Element): boolean => {
            const r = e.getBoundingClientRect();
            return (
              (r.width > 0 || r.height > 0) &&
              r.left >= canvas.left - 1 &&
              r.right <= canvas.right + 1 &&
              r.top >= canvas.top - 1 &&
              r.bottom <= canvas.bottom + 1
            );
          };
          const shown = (selector: string, attr: string): string[] =>
            [
              ...new Set(
                [...document.querySelectorAll(selector)].filter(inside).map((e) => e.getAttribute(attr) ?? ""),
              ),
            ].sort();
          return {
            networks: shown("g.band", "data-network"),
            members: shown("g.node.member", "data-member"),
            links: [
              ...new Set(
                [...document.querySelectorAll<SVGGElement>("g.link")]
                  .filter((g) =>
                    [...g.querySelectorAll<SVGPathElement>("path.seg")].some(
                      (p) => p.getTotalLength() > 0 && inside(p),
                    ),
                  )
                  .map((g) => g.dataset["link"] ?? ""),
              ),
            ].sort(),
          };
        });
        expect(drawn.networks).toEqual(compiled.networks.map((n) => n.name).sort());
        expect(drawn.members).toEqual(compiled.members.map((m) => m.qualified).sort());
        expect(drawn.links).toEqual([...new Set(compiled.links.map((l) => l.qualified))].sort());

        // Clicked in the list, a packet's path is drawn: the lines strata trace prints, its links and members marked.
        const lines = readFileSync(join(run, "trace.jsonl"), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as TraceLine);
        const clicked = sample(lines, PACKETS_PER_EXAMPLE);
        // The screenshot's packet: the one crossing the most links (the first of them), clicked last.
        const longest = lines.reduce((a, b) => (pathOf(b).links.length > pathOf(a).links.length ? b : a));
        for (const line of [...clicked.filter((l) => l !== longest), longest]) {
          const li = `#packet-list li[data-packet="${line.packet}"]`;
          await (line === longest ? page.click(li) : click(page, li));
          const shown = await drawnPath(page);
          const traced = await strata("trace", run, "--packet", String(line.packet));
          expect(traced.code).toBe(0);
          expect(shown).toEqual({
            packet: String(line.packet),
            lines: traced.stdout.trimEnd().split("\n"),
            ...pathOf(line),
          });
        }
        const shot = join(ARTIFACTS, `${name}.png`);
        await screenshot(page, shot);
        if (name === "vxlan" && process.env["UPDATE_GOLDENS"] === "1") {
          mkdirSync(join(root, "docs", "img"), { recursive: true });
          copyFileSync(shot, README_IMAGE);
        }
      },
    );
  },
);

describe.skipIf("missing" in found)(
  `printing and --svg, in chromium${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    let page: Page;
    let built: { spec: string; run: string; page: string };
    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      built = await buildPage("vxlan");
      page = await newPage();
    });
    afterAll(async () => {
      await page.close();
    });

    it(
      "prints the whole drawing across the page and the chosen packet's " + "steps, nothing that works only on screen",
      async () => {
        await open(page, built.page);
        await page.click('#packet-list li[data-packet="1"]');
        await page.emulateMediaType("print");
        try {
          const printed = await page.evaluate(() => {
            const shown = (selector: string): boolean =>
              [...document.querySelectorAll(selector)].some(
                (e) => getComputedStyle(e).display !== "none" && e.getBoundingClientRect().height > 0,
              );
            const svg = (document.querySelector("#canvas > svg") as SVGSVGElement).getBoundingClientRect();
            return {
              drawing: shown("#canvas > svg") && svg.width >= document.body.getBoundingClientRect().width - 4,
              legend: shown(".legend"),
              steps: shown("#path ol.steps"),
              onScreenOnly: ["header .tools", "#filter", "#packet-list", "#match-count", ".hint"].filter(shown),
            };
          });
          expect(printed).toEqual({ drawing: true, legend: true, steps: true, onScreenOnly: [] });
          const pdf = await page.pdf({ path: join(ARTIFACTS, "vxlan.pdf"), landscape: true, printBackground: true });
          expect(pdf.length).toBeGreaterThan(10_000);
        } finally {
          await page.emulateMediaType("screen");
        }
      },
    );

    it("--svg's file opens on its own and draws every network, member and link", async () => {
      const file = join(ARTIFACTS, "vxlan.svg");
      const r = await strata("view", built.spec, "--run", built.run, "--svg", file);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      await page.goto(pathToFileURL(file).href);
      const drawn = await page.evaluate(() => {
        const sized = (e: Element): boolean => {
          const r = e.getBoundingClientRect();
          return r.width > 0 || r.height > 0;
        };
        const names = (selector: string, attr: string): string[] =>
          [
            ...new Set([...document.querySelectorAll(selector)].filter(sized).map((e) => e.getAttribute(attr) ?? "")),
          ].sort();
        return {
          networks: names("g.band", "data-network"),
          members: names("g.node.member", "data-member"),
          links: names("g.link", "data-link"),
        };
      });
      const compiled = compile(loadSpec(built.spec));
      expect(drawn).toEqual({
        networks: compiled.networks.map((n) => n.name).sort(),
        members: compiled.members.map((m) => m.qualified).sort(),
        links: [...new Set(compiled.links.map((l) => l.qualified))].sort(),
      });
    });
  },
);

/** A capture of Ethernet frames from host `from` of bench/dataplane.ts's specs to each of `to`, `len` bytes each. */
function frames(file: string, from: number, to: readonly number[], len = 64): void {
  const bytes = (i: number): number[] =>
    mac(i)
      .split(":")
      .map((b) => Number.parseInt(b, 16));
  const w = new PcapWriter(file, { linkType: 1, snapLen: 262144 });
  const frame = new Uint8Array(len);
  to.forEach((dst, k) => {
    frame.set([...bytes(dst), ...bytes(from), 0x88, 0xb5]);
    w.write(frame, 0, len, len, 1_700_000_000, k * 1000);
  });
  w.close();
}

describe.skipIf("missing" in found)(
  `large descriptions and packets, in chromium${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    let page: Page;
    let dir = "";
    const errors: string[] = [];
    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      dir = mkdtempSync(join(tmpdir(), "strata-view-large-"));
      page = await newPage();
      page.on("pageerror", (e) => errors.push(String(e)));
    });
    afterAll(async () => {
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const hub =
      "a hub of 1,000 spokes (its spokes in a block strata lays out): all drawn, packets' paths along their links";
    it(hub, async () => {
      const spec = join(dir, "hub.yaml");
      writeFileSync(spec, hubSpec(1000));
      frames(join(dir, "h1.pcap"), 1, [2, 500, 1000]);
      const run = join(dir, "hub-run");
      const file = join(dir, "hub.html");
      expect(
        (await strata("run", spec, "--in", `lan:h1.1=${join(dir, "h1.pcap")}`, "--out", run, "--trace")).code,
      ).toBe(0);
      expect(await strata("view", spec, "--run", run, "--out", file)).toMatchObject({ code: 0, stderr: "" });
      await open(page, file);
      const inside = await page.evaluate(() => {
        const canvas = (document.getElementById("canvas") as HTMLElement).getBoundingClientRect();
        return [...document.querySelectorAll("g.node.member")].filter((e) => {
          const r = e.getBoundingClientRect();
          return (
            r.width > 0 &&
            r.left >= canvas.left - 1 &&
            r.right <= canvas.right + 1 &&
            r.top >= canvas.top - 1 &&
            r.bottom <= canvas.bottom + 1
          );
        }).length;
      });
      expect(inside).toBe(1001);
      const lines = readFileSync(join(run, "trace.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as TraceLine);
      expect(lines).toHaveLength(3);
      for (const line of lines) {
        await click(page, `#packet-list li[data-packet="${line.packet}"]`);
        const traced = await strata("trace", run, "--packet", String(line.packet));
        expect(await drawnPath(page)).toEqual({
          packet: String(line.packet),
          lines: traced.stdout.trimEnd().split("\n"),
          ...pathOf(line),
        });
      }
      await screenshot(page, join(ARTIFACTS, "hub-1000.png"));
      expect(errors).toEqual([]);
    });

    it("a frame of 200,000 bytes: its hex dump drawn (62363b8: Maximum call stack size exceeded)", async () => {
      const spec = join(root, "examples/hub-and-spoke/network.yaml");
      frames(join(dir, "big.pcap"), 1, [3], 200_000);
      const run = join(dir, "big-run");
      const file = join(dir, "big.html");
      expect(
        (await strata("run", spec, "--in", `lan:h1.1=${join(dir, "big.pcap")}`, "--out", run, "--trace")).code,
      ).toBe(0);
      expect(await strata("view", spec, "--run", run, "--out", file)).toMatchObject({ code: 0, stderr: "" });
      await open(page, file);
      await page.click('#packet-list li[data-packet="0"]');
      await page.click("#path li.has-bytes");
      const dump = await page.evaluate(() => ({
        what: document.querySelector("#decoded .decoded > div")?.textContent,
        lines: (document.querySelector("#decoded pre.hex")?.textContent ?? "").trimEnd().split("\n").length,
      }));
      expect(dump).toEqual({ what: "crossed lan.h1.1-hub.1: 200000 bytes", lines: 200_000 / 16 });
      // The pointer on the Ethernet layer lights its 14 bytes in the dump, and no others.
      await page.hover("#decoded details.layer summary");
      const lit = await page.$$eval("#decoded pre.hex span.hl", (spans) =>
        spans.map((s) => (s.textContent ?? "").replace(/\s/g, "")).join(""),
      );
      expect(lit).toBe([mac(3), mac(1), "88:b5"].join("").replace(/:/g, ""));
      expect(errors).toEqual([]);
    });
  },
);

/** A key pressed, text typed, or Tab pressed until the focus is on an element `selector` matches. */
type Key = { readonly press: KeyInput } | { readonly type: string } | { readonly tabTo: string };

describe.skipIf("missing" in found)(
  `choosing a packet by keyboard, in chromium${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    let page: Page;
    let built: { run: string; page: string };
    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      built = await buildPage("vxlan");
      page = await newPage();
    });
    afterAll(async () => {
      await page.close();
    });

    const cases: { name: string; keys: Key[]; packet: number | undefined; step?: number; focus?: string }[] = [
      {
        name: "/ goes to the search; a number and Enter choose that packet",
        keys: [{ press: "/" }, { type: "10" }, { press: "Enter" }],
        packet: 10,
        focus: "#packet-list",
      },
      {
        name: "a search by fate, then ↓ from the search box chooses its first packet",
        keys: [{ press: "/" }, { type: "delivered to tenant.vm3" }, { press: "ArrowDown" }],
        packet: 2,
        focus: "#packet-list",
      },
      {
        name: "↓ chooses the first packet, and ↓ again the next",
        keys: [{ press: "ArrowDown" }, { press: "ArrowDown" }],
        packet: 1,
      },
      {
        name: "↑ goes back to the packet before",
        keys: [{ press: "ArrowDown" }, { press: "ArrowDown" }, { press: "ArrowDown" }, { press: "ArrowUp" }],
        packet: 1,
      },
      {
        name: "→ walks the chosen packet's path a step at a time, ← back",
        keys: [
          { press: "ArrowDown" },
          { press: "ArrowRight" },
          { press: "ArrowRight" },
          { press: "ArrowRight" },
          { press: "ArrowLeft" },
        ],
        packet: 0,
        step: 1,
      },
      {
        name: "Esc clears the path",
        keys: [{ press: "/" }, { type: "3" }, { press: "Enter" }, { press: "Escape" }],
        packet: undefined,
      },
      {
        name: "Tab reaches a packet in the list, ↓ chooses",
        keys: [{ tabTo: "#packet-list" }, { press: "ArrowDown" }],
        packet: 0,
        focus: "#packet-list",
      },
    ];
    it.each(cases)("$name", async ({ keys, packet, step, focus }) => {
      await open(page, built.page);
      for (const key of keys) {
        if ("press" in key) await page.keyboard.press(key.press);
        else if ("type" in key) await page.keyboard.type(key.type);
        else {
          for (
            let tabs = 0;
            !(await page.evaluate((s) => document.activeElement?.matches(s) === true, key.tabTo));
            tabs++
          ) {
            expect(tabs, `Tab never reached ${key.tabTo}`).toBeLessThan(100);
            await page.keyboard.press("Tab");
          }
        }
      }
      const shown = await drawnPath(page);
      if (packet === undefined) {
        expect(shown).toEqual({ packet: null, lines: [], links: [], members: [] });
      } else {
        const traced = await strata("trace", built.run, "--packet", String(packet));
        expect(shown.packet).toBe(String(packet));
        expect(shown.lines).toEqual(traced.stdout.trimEnd().split("\n"));
      }
      if (step !== undefined) {
        const now = await page.evaluate(() => ({
          step: document.querySelector("#path li.current")?.getAttribute("data-step"),
          marked: document.querySelectorAll(".strata-topology .now").length,
        }));
        expect(now.step).toBe(String(step));
        expect(now.marked).toBeGreaterThan(0);
      }
      if (focus !== undefined)
        expect(await page.evaluate((s) => document.activeElement?.matches(s) === true, focus)).toBe(true);
    });

    it("Tab reaches a member on the drawing, and Enter shows its details", async () => {
      await open(page, built.page);
      for (
        let tabs = 0;
        !(await page.evaluate(() => document.activeElement?.matches("g.node.member") === true));
        tabs++
      ) {
        expect(tabs, "Tab never reached a member").toBeLessThan(100);
        await page.keyboard.press("Tab");
      }
      const member = await page.evaluate(() => document.activeElement?.getAttribute("data-member"));
      await page.keyboard.press("Enter");
      expect(await page.evaluate(() => document.querySelector("#details h2")?.textContent)).toBe(member);
      expect(
        await page.evaluate(() => document.querySelector("g.node.member.selected")?.getAttribute("data-member")),
      ).toBe(member);
    });
  },
);

describe.skipIf("missing" in found)(
  `strata view --analysis, in chromium${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    let page: Page;
    const errors: string[] = [];
    beforeAll(async () => {
      page = await newPage();
      page.on("pageerror", (e) => errors.push(String(e)));
    });
    afterAll(async () => {
      await page.close();
    });
    /** The links and members a path as `strata analyze` prints it names: "lan.h1 forward row 0 → lan.h1.1-s1.1 → …". */
    const named = (path: string): { links: string[]; members: string[] } => {
      const parts = path.split(" → ");
      const rows = parts.filter((p) => / (row \d+|miss)$/.test(p));
      return {
        links: [...new Set(parts.filter((p) => !rows.includes(p)))].sort(),
        members: [...new Set(rows.map((p) => p.split(" ")[0] ?? ""))].sort(),
      };
    };
    const cases = [
      { name: "a loop", spec: join(root, "test/fixtures/analysis/loop.yaml") },
      { name: "black holes", spec: join(root, "test/fixtures/analysis/black-hole.yaml") },
    ];
    it.each(cases)(
      "$name: each loop, black hole and matrix cell clicked is drawn along the links and members of its path",
      async ({ name, spec }) => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const file = join(ARTIFACTS, `analysis-${name.replace(/ /g, "-")}.html`);
        expect(await strata("view", spec, "--analysis", "--out", file)).toMatchObject({ code: 0, stderr: "" });
        const answer = JSON.parse((await strata("analyze", spec, "--loops", "--black-holes", "--json")).stdout) as {
          loops: { path: string }[];
          blackHoles: { path: string }[];
        };
        const paths = [...answer.loops, ...answer.blackHoles].map((f) => f.path);
        expect(paths.length).toBeGreaterThan(0);
        await open(page, file);
        for (const [k, path] of paths.entries()) {
          await click(page, `#findings li[data-finding="${k}"]`);
          const drawn = await page.evaluate(() => {
            const attrs = (selector: string, attr: string): string[] =>
              [...new Set([...document.querySelectorAll(selector)].map((e) => e.getAttribute(attr) ?? ""))].sort();
            return {
              shown: document.documentElement.dataset["shownAnalysis"] ?? null,
              steps: [...document.querySelectorAll("#analysis-path ol.steps > li")].map((li) =>
                (li.textContent ?? "").trim(),
              ),
              links: attrs(".strata-topology.tracing g.link.hop:has(path.seg.hop)", "data-link"),
              members: attrs(".strata-topology.tracing g.node.member.hop", "data-member"),
            };
          });
          expect(drawn).toEqual({ shown: `finding ${k}`, steps: path.split(" → "), ...named(path) });
        }
        // A cell of the matrix: the path of one header class from its row's member to its column's.
        const cells = await page.$$eval("table.matrix td.has-path", (tds) =>
          tds.map((td) => td.getAttribute("data-cell") ?? ""),
        );
        expect(cells.length).toBeGreaterThan(0);
        for (const cell of cells) {
          await click(page, `table.matrix td[data-cell="${cell}"]`);
          const drawn = await page.evaluate(() => {
            const attrs = (selector: string, attr: string): string[] =>
              [...new Set([...document.querySelectorAll(selector)].map((e) => e.getAttribute(attr) ?? ""))].sort();
            return {
              path: document.querySelector("#analysis-path p")?.textContent ?? "",
              links: attrs(".strata-topology.tracing g.link.hop:has(path.seg.hop)", "data-link"),
              members: attrs(".strata-topology.tracing g.node.member.hop", "data-member"),
            };
          });
          expect(drawn.path).not.toBe("");
          expect({ links: drawn.links, members: drawn.members }).toEqual(named(drawn.path));
        }
        await page.click('#findings li[data-finding="0"]');
        await screenshot(page, file.replace(/\.html$/, ".png"));
        expect(errors).toEqual([]);
      },
    );
  },
);
