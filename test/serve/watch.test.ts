// Desired state for a running emulation (src/serve/watch.ts): the description
// file changes, the emulation converges to it between batches; a description
// with errors, or one that changes members or links, is reported and leaves the
// emulation as it was. --watch reloads on its own; `reload` and SIGHUP on demand.

import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { memoryIo } from "../../src/cli/io.js";
import { serve } from "../../src/cli/serve.js";
import { openCapture } from "../../src/pcap/index.js";
import type { Engine } from "../../src/engine/engine.js";
import { openServed } from "../engine/served.js";
import { DescriptionReloader, type ReloadResult } from "../../src/serve/watch.js";
import { until } from "../helpers/wait.js";

const root = new URL("../..", import.meta.url).pathname;
const ROUTER = readFileSync(join(root, "examples/live-router/network.yaml"), "utf8");
const TO_B = "            - { match: { dst: 10.0.2.0/24 }, out: 2 }\n";
/** r no longer routes to netB. */
const NO_ROUTE = ROUTER.replace(TO_B, "");
/** r sends netB's traffic back out to netA (out 1): a modified row. */
const MISROUTED = ROUTER.replace(TO_B, "            - { match: { dst: 10.0.2.0/24 }, out: 1 }\n");
const BROKEN = ROUTER.replace("header: ipv4", "header: ipv5");
/** Networks, members and links written in reverse order: the same topology. */
const REORDERED = (() => {
  const doc = parseYaml(ROUTER) as {
    networks: Record<string, { members: Record<string, unknown>; links?: unknown[] }>;
  };
  const reversed = <T>(r: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(r).reverse());
  doc.networks = reversed(doc.networks);
  for (const net of Object.values(doc.networks)) {
    net.members = reversed(net.members);
    if (net.links !== undefined) net.links = [...net.links].reverse();
  }
  return stringifyYaml(doc);
})();
/** A member more in lanA: another topology. */
const GROWN = ROUTER.replace(
  `      r: { name: "02:00:00:00:0a:fe", role: infra }`,
  `      r: { name: "02:00:00:00:0a:fe", role: infra }\n      s: { name: "02:00:00:00:0a:fd" }`,
);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The description at DIR/network.yaml, or at the path `arrange` makes in DIR (and writes ROUTER to). */
function setup(arrange?: (dir: string) => string): { file: string; em: Engine; left: string[]; send: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "strata-watch-"));
  dirs.push(dir);
  let file = join(dir, "network.yaml");
  if (arrange === undefined) writeFileSync(file, ROUTER);
  else file = arrange(dir);
  const { em } = openServed({ spec: file, endpoints: ["lanA:hostA"], flushMs: 0 });
  const left: string[] = [];
  em.onExit((exit) => left.push(exit.name));
  const r = openCapture(join(root, "pcaps/example-router-h1.pcap"));
  const b = r.batches().next().value;
  r.close();
  if (b === undefined) throw new Error("empty capture");
  const frame = b.data.slice(b.offset[0] ?? 0, (b.offset[0] ?? 0) + (b.capLen[0] ?? 0));
  /** One frame from hostA to 10.0.2.2: where it left, if it did. */
  const send = (): string[] => {
    left.length = 0;
    em.submit(0, frame);
    em.flush();
    return [...left];
  };
  return { file, em, left, send };
}

describe("DescriptionReloader.reload", () => {
  it.each([
    {
      name: "a route removed",
      text: NO_ROUTE,
      leaves: [],
      line: /reloaded .*network\.yaml: 0 rows inserted, 0 modified, 1 deleted/,
    },
    {
      name: "a route changed",
      text: MISROUTED,
      leaves: ["lanA:hostA"],
      line: /reloaded .*network\.yaml: 0 rows inserted, 1 modified, 0 deleted/,
    },
    // Known by name, not by place: the ports and exits stay bound to the same links.
    {
      name: "networks, members and links written in another order",
      text: REORDERED,
      leaves: ["lanB:hostB"],
      line: /reloaded .*network\.yaml: 0 rows inserted, 0 modified, 0 deleted$/,
    },
  ])("$name: applied between batches, the next packet follows it", async ({ text, leaves, line }) => {
    const { file, em, send } = setup();
    const reloader = new DescriptionReloader(em, file);
    expect(send()).toEqual(["lanB:hostB"]);
    writeFileSync(file, text);
    const r = await reloader.reload();
    expect(r.ok).toBe(true);
    expect(r.lines[0]).toMatch(line);
    expect(send()).toEqual(leaves);
    // And back.
    writeFileSync(file, ROUTER);
    expect((await reloader.reload()).ok).toBe(true);
    expect(send()).toEqual(["lanB:hostB"]);
    em.stop();
  });

  it.each([
    {
      name: "a description with errors",
      text: BROKEN,
      first: /^.*network\.yaml: 40:13 networks\.ip\.header: unknown header design 'ipv5'/,
    },
    {
      name: "another topology",
      text: GROWN,
      first: new RegExp(
        [
          String.raw`^.*network\.yaml: this change needs another topology \(member lanA\.s`,
          String.raw` added\), and here only tables may change`,
        ].join(""),
      ),
    },
    { name: "no file", text: undefined, first: /cannot read/ },
  ])("refuses $name: reported, and the emulation goes on as it was", async ({ text, first }) => {
    const { file, em, send } = setup();
    const reloader = new DescriptionReloader(em, file);
    writeFileSync(file, NO_ROUTE);
    await reloader.reload();
    const installed = em.installed;
    if (text === undefined) rmSync(file);
    else writeFileSync(file, text);
    const r = await reloader.reload();
    expect(r.ok).toBe(false);
    expect(r.lines[0]).toMatch(first);
    expect(em.installed).toBe(installed);
    expect(send()).toEqual([]);
    em.stop();
  });

  it("diffs against rows a control command took out in the meantime", async () => {
    const { file, em, send } = setup();
    const reloader = new DescriptionReloader(em, file);
    const { runCommand } = await import("../../src/serve/control.js");
    expect((await runCommand(em, "delete ip:r forward 1")).ok).toBe(true);
    expect(send()).toEqual([]);
    // The description still has the row: reloading it puts it back.
    const r = await reloader.reload();
    expect(r.lines[0]).toMatch(/1 rows inserted, 0 modified, 0 deleted/);
    expect(send()).toEqual(["lanB:hostB"]);
    em.stop();
  });
});

describe("down and up commands", () => {
  it.each([
    { command: "down link lanB:r.1", answer: "down: lanB.hostB", leaves: [] as string[] },
    { command: "down member ip:r", answer: "down: ip.r", leaves: [] as string[] },
    { command: "down machine r", answer: "down: lanA.r, lanB.r, ip.r", leaves: [] as string[] },
    { command: "down link lanA:r.7", answer: "strata: lanA.r has no link with identifier 7", leaves: ["lanB:hostB"] },
    { command: "down router r", answer: "strata: 'router' is not a link, member or machine", leaves: ["lanB:hostB"] },
  ])("$command", async ({ command, answer, leaves }) => {
    const { file, em, send } = setup();
    const reloader = new DescriptionReloader(em, file);
    const { runCommand } = await import("../../src/serve/control.js");
    const r = await runCommand(em, command);
    expect(r.ok ? r.line : `strata: ${r.line}`).toMatch(
      new RegExp(`^${answer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
    expect(send()).toEqual(leaves);
    // It stays down across a reload, and comes back up.
    writeFileSync(file, MISROUTED);
    await reloader.reload();
    writeFileSync(file, ROUTER);
    await reloader.reload();
    expect(send()).toEqual(leaves);
    if (r.ok) expect((await runCommand(em, command.replace(/^down/, "up"))).ok).toBe(true);
    expect(send()).toEqual(["lanB:hostB"]);
    em.stop();
  });
});

describe("DescriptionReloader and --trace", () => {
  it("trace.jsonl names each packet's rows by the tables in force when it was processed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-watch-"));
    dirs.push(dir);
    const file = join(dir, "network.yaml");
    writeFileSync(file, ROUTER);
    const out = join(dir, "out");
    const { em, stop } = openServed({ spec: file, endpoints: ["lanA:hostA"], flushMs: 0, out, trace: true });
    const r = openCapture(join(root, "pcaps/example-router-h1.pcap"));
    const b = r.batches().next().value;
    r.close();
    if (b === undefined) throw new Error("empty capture");
    const frame = b.data.slice(b.offset[0] ?? 0, (b.offset[0] ?? 0) + (b.capLen[0] ?? 0));
    const reloader = new DescriptionReloader(em, file);
    em.submit(0, frame);
    em.flush();
    writeFileSync(file, MISROUTED);
    expect((await reloader.reload()).ok).toBe(true);
    em.submit(0, frame);
    em.flush();
    stop();
    const rules = readFileSync(join(out, "trace.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map(
        (l) =>
          (JSON.parse(l) as { steps: { step: string; member?: string; rule?: string }[] }).steps.find(
            (s) => s.step === "forward" && s.member === "ip.r",
          )?.rule,
      );
    expect(rules).toEqual(["dst 10.0.2.0/24 → out 2", "dst 10.0.2.0/24 → out 1"]);
  });
});

describe("DescriptionReloader.watch", () => {
  it("reloads a moment after the file changes, once per change", async () => {
    const { file, em, send } = setup();
    const results: ReloadResult[] = [];
    const reloader = new DescriptionReloader(em, file, (r) => results.push(r));
    reloader.watch(30);
    const reloads = (n: number): Promise<boolean> =>
      until(
        () => results.length >= n,
        () => `${results.length} reloads, not ${n}`,
      );
    writeFileSync(file, NO_ROUTE);
    await reloads(1);
    expect(results.map((r) => r.ok)).toEqual([true]);
    expect(send()).toEqual([]);
    // An editor's save: the new text written beside and renamed over the file.
    writeFileSync(`${file}.tmp`, BROKEN);
    copyFileSync(`${file}.tmp`, file);
    await reloads(2);
    expect(results.map((r) => r.ok)).toEqual([true, false]);
    writeFileSync(file, ROUTER);
    await reloads(3);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(send()).toEqual(["lanB:hostB"]);
    reloader.close();
    em.stop();
  });
});

describe("DescriptionReloader.watch: a description that is a symbolic link", () => {
  /** Writes `text` to `path`, making its directory. */
  const put = (path: string, text: string): void => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  /** Points link `path` at `target` in one step, as `ln -sfn` and Kubernetes do: a new link renamed over the old. */
  const repoint = (path: string, target: string): void => {
    symlinkSync(target, `${path}.new`);
    renameSync(`${path}.new`, path);
  };
  it.each([
    {
      name: "a link to a file elsewhere, the file edited in place",
      arrange: (dir: string) => {
        put(join(dir, "real", "router.yaml"), ROUTER);
        symlinkSync(join(dir, "real", "router.yaml"), join(dir, "network.yaml"));
        return join(dir, "network.yaml");
      },
      change: (dir: string) => writeFileSync(join(dir, "real", "router.yaml"), NO_ROUTE),
    },
    {
      name: "a link pointed at another file",
      arrange: (dir: string) => {
        put(join(dir, "v1", "router.yaml"), ROUTER);
        put(join(dir, "v2", "router.yaml"), NO_ROUTE);
        symlinkSync(join(dir, "v1", "router.yaml"), join(dir, "network.yaml"));
        return join(dir, "network.yaml");
      },
      change: (dir: string) => repoint(join(dir, "network.yaml"), join(dir, "v2", "router.yaml")),
    },
    {
      name: "a link to a link to a file, the file edited in place",
      arrange: (dir: string) => {
        put(join(dir, "c", "router.yaml"), ROUTER);
        mkdirSync(join(dir, "b"));
        symlinkSync(join(dir, "c", "router.yaml"), join(dir, "b", "router.yaml"));
        symlinkSync(join(dir, "b", "router.yaml"), join(dir, "network.yaml"));
        return join(dir, "network.yaml");
      },
      change: (dir: string) => writeFileSync(join(dir, "c", "router.yaml"), NO_ROUTE),
    },
    {
      name: "a ConfigMap: network.yaml → ..data/network.yaml, its ..data link swapped to new data",
      arrange: (dir: string) => {
        const cm = join(dir, "cm");
        put(join(cm, "..2026_11_26_v1", "network.yaml"), ROUTER);
        symlinkSync("..2026_11_26_v1", join(cm, "..data"));
        symlinkSync("..data/network.yaml", join(cm, "network.yaml"));
        return join(cm, "network.yaml");
      },
      change: (dir: string) => {
        const cm = join(dir, "cm");
        put(join(cm, "..2026_11_26_v2", "network.yaml"), NO_ROUTE);
        repoint(join(cm, "..data"), "..2026_11_26_v2");
        rmSync(join(cm, "..2026_11_26_v1"), { recursive: true });
      },
    },
  ])("$name: reloaded", async ({ arrange, change }) => {
    let dir = "";
    const { file, em, send } = setup((d) => {
      dir = d;
      return arrange(d);
    });
    const results: ReloadResult[] = [];
    const reloader = new DescriptionReloader(em, file, (r) => results.push(r));
    reloader.watch(30);
    expect(send()).toEqual(["lanB:hostB"]);
    change(dir);
    await until(
      () => results.length >= 1,
      () => "no reload",
    );
    expect(results.map((r) => [r.ok, r.lines[0]])).toEqual([
      [true, `reloaded ${file}: 0 rows inserted, 0 modified, 1 deleted`],
    ]);
    expect(send()).toEqual([]);
    reloader.close();
    em.stop();
  });
});

describe("strata serve --watch, reload", () => {
  it("the reload command applies the file; errors are strata: lines; the emulation goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-watch-"));
    dirs.push(dir);
    const file = join(dir, "network.yaml");
    writeFileSync(file, ROUTER);
    const commands = new PassThrough();
    const io = memoryIo();
    const done = serve(file, { port: [], commands: true, watch: false, hopLimit: 64, copyLimit: 4096 }, io, {
      commands,
    });
    // Each command answered before the file changes again.
    const say = async (line: string, answer: RegExp): Promise<void> => {
      const from = io.stderr.text.length;
      commands.write(`${line}\n`);
      await until(
        () => answer.test(io.stderr.text.slice(from)),
        () => `no answer ${answer} to ${line}: ${io.stderr.text}`,
      );
    };
    writeFileSync(file, BROKEN);
    await say("reload", /the emulation goes on/);
    writeFileSync(file, NO_ROUTE);
    await say("reload", /^reloaded /m);
    commands.write("stop\n");
    expect(await done).toBe(0);
    const lines = io.stderr.text.split("\n");
    expect(lines.filter((l) => l.startsWith("strata: ") || l.startsWith("reloaded"))).toEqual([
      expect.stringMatching(/^strata: .*network\.yaml: 40:13 networks\.ip\.header: unknown header design 'ipv5'/),
      "strata: the emulation goes on with the description it had",
      expect.stringMatching(/^reloaded .*network\.yaml: 0 rows inserted, 0 modified, 1 deleted$/),
    ]);
  });
});
