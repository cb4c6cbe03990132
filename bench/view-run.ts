// The work of `npm run bench:view` (./view.ts reads and checks its flags, then imports this: a flag refused costs a
// node start and no more, not strata's CLI and layout loaded).

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { memoryIo } from "../src/cli/io.js";
import { main } from "../src/cli/main.js";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { PcapWriter } from "../src/pcap/pcap-writer.js";
import { viewGraph } from "../src/view/graph.js";
import { layOut } from "../src/view/layout.js";
import type { Browser } from "puppeteer-core";
import { findBrowser, launch } from "./browser.js";
import { fatTreeSpec, hubSpec, mac } from "./descriptions.js";
import { randomPairs } from "./frames.js";
import { median } from "./stats.js";

const PODS = 16;
const EDGES = 8;
const HOSTS = 8;
const FRAME_LEN = 64;
/** A destination no host has: such frames go up to the core and are dropped there. */
const NOBODY = 0xffffff;

/** The fat-tree, and one capture per sending host (the first host of each pod): the files and the --in flags. */
function writeInputs(dir: string, packets: number): { spec: string; inputs: string[]; members: number } {
  const { yaml, hosts, hostsPerPod } = fatTreeSpec(PODS, EDGES, HOSTS);
  const spec = join(dir, "fat-tree.yaml");
  writeFileSync(spec, yaml);
  const inputs: string[] = [];
  const pairs = randomPairs(packets, hosts, 11);
  const frame = new Uint8Array(FRAME_LEN);
  for (let pod = 0; pod < PODS; pod++) {
    const src = pod * hostsPerPod + 1;
    const file = join(dir, `h${src}.pcap`);
    const w = new PcapWriter(file, { linkType: 1, snapLen: 65535 });
    for (let i = pod; i < packets; i += PODS) {
      const [picked] = pairs[i] ?? [1];
      // Another pod's host, or nobody.
      const dst =
        i % 100 === 99
          ? NOBODY
          : Math.floor((picked - 1) / hostsPerPod) === pod
            ? ((picked - 1 + hostsPerPod) % hosts) + 1
            : picked;
      frame.fill(0);
      frame.set(macBytes(dst), 0);
      frame.set(macBytes(src), 6);
      frame.set([0x08, 0x00, 0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17], 12);
      w.write(frame, 0, FRAME_LEN, FRAME_LEN, 1_700_000_000 + Math.floor(i / 1000), (i % 1000) * 1_000_000);
    }
    w.close();
    inputs.push("--in", `lan:h${src}.1=${file}`);
  }
  return { spec, inputs, members: 1 + PODS + PODS * EDGES + hosts };
}

function macBytes(i: number): number[] {
  return mac(i)
    .split(":")
    .map((b) => Number.parseInt(b, 16));
}

async function strata(...argv: string[]): Promise<{ ms: number; stdout: string }> {
  const io = memoryIo();
  const t0 = performance.now();
  const code = await main(argv, io);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`strata ${argv.join(" ")}: exit ${code}: ${io.stderr.text}`);
  return { ms, stdout: io.stdout.text };
}

interface BrowserFigures {
  /** From navigation to the first contentful paint. */
  firstPaint: number;
  /** From navigation to the end of the page's script: packets decoded, list drawn, drawing fitted. */
  ready: number;
  /** A packet clicked in the list until its path is drawn and painted. */
  pathClicked: number;
  /** A packet number typed into the search (over every packet) until its path is drawn and painted. */
  pathFound: number;
  /** Every dropped packet found by the search, listed and painted. */
  searchDropped: number;
}

/** Times the page opened afresh this many times: the median of each figure is reported. */
const OPENINGS = 5;

async function inBrowser(page: string, packets: number): Promise<BrowserFigures> {
  const found = findBrowser();
  if ("missing" in found) throw new Error(found.missing);
  const { browser, close } = await launch(found.executable);
  try {
    const runs: BrowserFigures[] = [];
    for (let k = 0; k < OPENINGS; k++) runs.push(await openedOnce(browser, page, packets));
    const middle = (key: keyof BrowserFigures): number => median(runs.map((r) => r[key]));
    return {
      firstPaint: middle("firstPaint"),
      ready: middle("ready"),
      pathClicked: middle("pathClicked"),
      pathFound: middle("pathFound"),
      searchDropped: middle("searchDropped"),
    };
  } finally {
    await close();
  }
}

async function openedOnce(browser: Browser, page: string, packets: number): Promise<BrowserFigures> {
  const tab = await browser.newPage();
  try {
    await tab.setViewport({ width: 1440, height: 900 });
    await tab.goto(pathToFileURL(page).href, { timeout: 120_000 });
    await tab.waitForSelector("html[data-ready]", { timeout: 120_000 });
    const loaded = await tab.evaluate(() => ({
      firstPaint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
      ready: Number(document.documentElement.dataset["ready"]),
    }));
    // Each action, then two frames: the path is drawn and painted.
    const timed = (what: string, arg: string): Promise<number> =>
      tab.evaluate(
        async (what, arg) => {
          const painted = (): Promise<void> =>
            new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
          const search = (text: string): void => {
            const input = document.getElementById("filter") as HTMLInputElement;
            input.value = text;
            input.dispatchEvent(new Event("input"));
          };
          await painted();
          const t0 = performance.now();
          if (what === "click")
            (document.querySelector(`#packet-list li[data-packet="${arg}"]`) as HTMLElement).click();
          else if (what === "find") {
            search(arg);
            (document.querySelector("#packet-list li") as HTMLElement).click();
          } else search(arg);
          await painted();
          return performance.now() - t0;
        },
        what,
        arg,
      );
    const pathClicked = await timed("click", "200");
    const pathFound = await timed("find", String(packets - 1));
    const searchDropped = await timed("search", "dropped");
    const shown = await tab.evaluate(() => document.documentElement.dataset["shownPacket"]);
    if (shown !== String(packets - 1)) throw new Error(`the page shows packet ${shown}, not ${packets - 1}`);
    return { ...loaded, pathClicked, pathFound, searchDropped };
  } finally {
    await tab.close();
  }
}

/**
 * Run by each hub's child process: `strata view SPEC --out PAGE`, then on stdout its time
 * (node's start and the imports not counted), its peak RSS and its exit code, as JSON.
 */
const HUB_CHILD = `
const [cli, io, spec, page] = process.argv.slice(1);
const { main } = await import(cli);
const { memoryIo } = await import(io);
const out = memoryIo();
const t0 = performance.now();
const code = await main(["view", spec, "--out", page], out);
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ code, ms, maxRssKb: process.resourceUsage().maxRSS, stderr: out.stderr.text }));
`;

/** For each size, the hub drawn by strata view in a process of its own, and laid out alone in this one. */
async function hubCurve(dir: string, sizes: readonly number[], say: (s: string) => void): Promise<void> {
  const here = (file: string): string => new URL(file, import.meta.url).href;
  // ELK's first layout pays for its start (some 0.5 s): paid here, not by the first size.
  await layOut(viewGraph(compile(parseSpec(hubSpec(10), "warm-up.yaml"))));
  say("spokes   strata view --out   peak RSS   layout alone");
  for (const n of sizes) {
    const spec = join(dir, `hub-${n}.yaml`);
    writeFileSync(spec, hubSpec(n));
    const child = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        HUB_CHILD,
        here("../src/cli/main.js"),
        here("../src/cli/io.js"),
        spec,
        join(dir, `hub-${n}.html`),
      ],
      { encoding: "utf8", maxBuffer: 1 << 20 },
    );
    const said = (child.stderr || child.stdout).trim().split("\n").at(-1) ?? "";
    let viewed = `exit ${child.status ?? child.signal ?? "?"}: ${said}`;
    if (child.status === 0) {
      const r = JSON.parse(child.stdout) as { code: number; ms: number; maxRssKb: number; stderr: string };
      viewed =
        r.code === 0
          ? `${(r.ms / 1000).toFixed(1).padStart(8)} s ${`${(r.maxRssKb / 1024).toFixed(0)} MB`.padStart(15)}`
          : `exit ${r.code}: ${r.stderr.trim()}`;
    }
    const graph = viewGraph(compile(parseSpec(hubSpec(n), spec)));
    const t0 = performance.now();
    await layOut(graph);
    const layout = `${((performance.now() - t0) / 1000).toFixed(2)} s`;
    say(`${n.toLocaleString("en-US").padStart(6)}   ${viewed}   ${layout.padStart(12)}`);
  }
}

/** The bench: the hub curve for `hubs` if any, else the fat-tree with `packets` packets; files in `given` or a new
 * directory. */
export async function viewBench(given: string | undefined, packets: number, hubs: readonly number[]): Promise<void> {
  const dir = given ?? mkdtempSync(join(tmpdir(), "strata-bench-view-"));
  mkdirSync(dir, { recursive: true });
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown CPU";
  const say = (s: string): boolean => process.stdout.write(`${s}\n`);
  const load = (): string =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(", ");
  if (hubs.length > 0) {
    say(`strata view of a hub as its spokes grow; files in ${dir}`);
    say(`CPU: ${cpu}; load average ${load()} at the start`);
    await hubCurve(dir, hubs, say);
    say(`load average ${load()} at the end`);
    return;
  }
  const { spec, inputs, members } = writeInputs(dir, packets);
  const run = join(dir, "run");
  const page = join(dir, "fat-tree.html");
  say(
    `strata view at scale: a fat-tree ` +
      `of ${members.toLocaleString("en-US")} members, ${packets.toLocaleString("en-US")} packets; files in ${dir}`,
  );
  say(
    `CPU: ${cpu}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")} at the start`,
  );

  const replayed = await strata("run", spec, ...inputs, "--out", run, "--trace");
  say(
    `strata run --trace:          ${(replayed.ms / 1000).toFixed(1)} s ` +
      `(trace.jsonl ${(statSync(join(run, "trace.jsonl")).size / 1e6).toFixed(0)} MB)`,
  );
  const alone = await strata(
    "view",
    spec,
    "--out",
    join(dir, "fat-tree-alone.html"),
    "--svg",
    join(dir, "fat-tree.svg"),
  );
  say(
    `strata view (no run):        ${(alone.ms / 1000).toFixed(1)} s, ` +
      `layout included (${alone.stdout.split("\n")[0] ?? ""})`,
  );
  const viewed = await strata("view", spec, "--run", run, "--out", page);
  say(`strata view --run:           ${(viewed.ms / 1000).toFixed(1)} s (${viewed.stdout.split("\n")[0] ?? ""})`);

  const f = await inBrowser(page, packets);
  const ms = (v: number): string => `${v.toFixed(0)} ms${v < 1000 ? "" : "  (over the 1 s goal)"}`;
  say(`chromium, first paint:       ${ms(f.firstPaint)}`);
  say(`chromium, page ready:        ${ms(f.ready)}`);
  say(`chromium, a packet's path:   ${ms(f.pathClicked)} (clicked in the list)`);
  say(`chromium, find and draw:     ${ms(f.pathFound)} (packet ${packets - 1} typed into the search)`);
  say(`chromium, search 'dropped':  ${ms(f.searchDropped)}`);
  say(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")} at the end`,
  );
}
