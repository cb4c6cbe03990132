// `strata view SPEC [--run DIR] [--out PAGE] [--svg FILE] [--bytes RANGES]`: the description as
// a picture — one self-contained HTML page, or a standalone SVG for papers — and, with a
// replay's outputs, where its packets went.

import cliProgress from "cli-progress";
import { closeSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { describeIoError, InputError, UsageError } from "../errors.js";
import { realOrResolved } from "../out-dir.js";
import { DELIVERED_DIR, LINKS_DIR } from "../engine/recordings.js";
import { TRACE_FILE, TRACE_INDEX_FILE } from "../engine/trace-file.js";
import { SUMMARY_FILE } from "../engine/outputs.js";
import type { PacketRanges } from "../wasm/runner.js";
import { viewGraph } from "../view/graph.js";
import { layOut } from "../view/layout.js";
import { pageData, renderPage } from "../view/page.js";
import { readRun, rowOrigins } from "../view/run-data.js";
import { analysisData } from "../view/analysis-data.js";
import { type Counts, linkLabel, renderSvg, WRITTEN_BY } from "../view/svg.js";
import { fileSize } from "./format.js";
import type { CommandContext } from "./command.js";
import type { Io } from "./io.js";

export interface ViewFlags {
  run?: string;
  out?: string;
  svg?: string;
  analysis?: boolean;
  bytes: PacketRanges;
}

/** Draws the description (and the run) into --out, --svg or both. */
export async function view(specFile: string, flags: ViewFlags, ctx: CommandContext): Promise<void> {
  const inputs = [
    specFile,
    ...(flags.run === undefined
      ? []
      : [SUMMARY_FILE, TRACE_FILE, TRACE_INDEX_FILE, LINKS_DIR, DELIVERED_DIR].map((f) =>
          join(flags.run as string, f),
        )),
  ];
  const outputs = [
    ...(flags.out === undefined ? [] : [["--out", flags.out] as const]),
    ...(flags.svg === undefined ? [] : [["--svg", flags.svg] as const]),
  ];
  if (outputs.length === 0)
    throw new UsageError("give --out PAGE.html for the page, --svg FILE.svg for the topology alone, or both");
  if (flags.out !== undefined && flags.svg !== undefined && realOrResolved(flags.out) === realOrResolved(flags.svg)) {
    throw new UsageError(`--out and --svg name one file, ${flags.svg}: give each its own`);
  }
  // Every output is checked before anything is read or written.
  for (const [flag, file] of outputs) checkOutput(flag, file, inputs);

  const progress = progressOn(ctx.io);
  try {
    await draw(specFile, flags, ctx, progress);
  } finally {
    progress.stop();
  }
}

/** The drawing, once the outputs are known to be writable. */
async function draw(specFile: string, flags: ViewFlags, ctx: CommandContext, stages: Progress): Promise<void> {
  stages.stage(`reading ${specFile}`);
  const compiled = compile(loadSpec(specFile));
  const graph = viewGraph(compiled);
  if (flags.run !== undefined) stages.stage(`reading ${join(flags.run, TRACE_FILE)}`);
  const run =
    flags.run === undefined
      ? undefined
      : await readRun(flags.run, graph, {
          bytes: flags.bytes,
          bytesText: bytesText(flags.bytes),
          progress: (done, total) => stages.at(done, total),
          origin: rowOrigins(compiled),
        });
  const counts: Counts | undefined =
    run === undefined
      ? undefined
      : {
          links: Object.fromEntries(Object.entries(run.links).map(([k, v]) => [k, v.packets])),
          members: Object.fromEntries(
            Object.entries(run.members).map(([k, v]) => [
              k,
              { delivered: v.delivered, dropped: Object.values(v.drops).reduce((a, b) => a + b, 0) },
            ]),
          ),
        };
  const members = graph.nodes.filter((n) => n.kind === "member").length;
  stages.stage(`laying out ${members.toLocaleString("en-US")} members`);
  const layout = await layOut(graph, new Map(graph.links.map((l) => [l.qualified, linkLabel(l, counts)])));
  const packets = run?.trace === undefined ? "" : `, ${run.trace.count.toLocaleString("en-US")} packets`;
  const what = `${graph.networks.length} networks, ${members} members, ${graph.links.length} links${packets}`;
  const drawn = counts === undefined ? {} : { counts };
  if (flags.out !== undefined) {
    stages.stage(`writing ${flags.out}`);
    const analysis = flags.analysis === true ? analysisData(compiled) : undefined;
    const page = renderPage(pageData(graph, run, analysis), renderSvg(graph, layout, drawn));
    writeOwn(flags.out, page);
    ctx.io.stdout.write(`wrote ${flags.out} (${fileSize(Buffer.byteLength(page))}): ${what}\n`);
  }
  if (flags.svg !== undefined) {
    stages.stage(`writing ${flags.svg}`);
    const svg = renderSvg(graph, layout, { ...drawn, standalone: true });
    writeOwn(flags.svg, svg);
    ctx.io.stdout.write(`wrote ${flags.svg} (${fileSize(Buffer.byteLength(svg))}): ${what}\n`);
  }
  for (const note of run?.notes ?? []) ctx.io.stdout.write(`note: ${note}\n`);
}

/** What strata view is at, for a person waiting: each stage named, and how far into the trace it has read. */
interface Progress {
  stage(what: string): void;
  at(done: number, total: number): void;
  stop(): void;
}

/**
 * Progress on stderr while it is a terminal, as strata run's bar (cli-progress): the stage, and
 * for the trace a bar; cleared when strata view is done. Elsewhere nothing.
 */
function progressOn(io: Io): Progress {
  if (!io.stderrIsTTY) return { stage: () => {}, at: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      format: (options, params, payload: { stage?: string; measured?: boolean }) =>
        payload.measured === true
          ? `strata view: ${payload.stage ?? ""} [${cliProgress.Format.BarFormat(params.progress, options)}] ` +
            `${Math.floor(params.progress * 100)}%`
          : `strata view: ${payload.stage ?? ""}…`,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    stage(what) {
      if (started) bar.update(0, { stage: what, measured: false });
      else bar.start(1, 0, { stage: what, measured: false });
      started = true;
    },
    at(done, total) {
      bar.setTotal(Math.max(total, 1));
      bar.update(done, { measured: true });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

function bytesText(ranges: PacketRanges): string {
  return ranges.map(([a, b]) => (a === b ? String(a) : b >= 2 ** 32 - 1 ? `${a}-` : `${a}-${b}`)).join(",");
}

/** Bytes at the top of a file in which strata view looks for its mark. */
const MARK_WITHIN = 512;

/**
 * Refuses an output that strata view may not write: a directory, a symbolic link, an input
 * (the description, a run's files), or a file it did not write itself.
 */
function checkOutput(flag: string, file: string, inputs: readonly string[]): void {
  const real = realOrResolved(file);
  for (const input of inputs) {
    const inside = realOrResolved(input);
    if (real === inside || real.startsWith(inside + sep)) {
      throw new InputError(
        file,
        "",
        `${flag} names an input of strata view, ${input}`,
        "write the page somewhere else",
      );
    }
  }
  let stat;
  try {
    stat = lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new InputError(file, "", `${flag} cannot be written: ${describeIoError(err)}`);
  }
  if (stat.isSymbolicLink())
    throw new InputError(
      file,
      "",
      `${flag} is a symbolic link and strata never writes through one`,
      "name the file itself",
    );
  if (stat.isDirectory())
    throw new InputError(
      file,
      "",
      `${flag} is a directory`,
      `name a file in it, e.g. ${join(file, flag === "--svg" ? "topology.svg" : "page.html")}`,
    );
  if (!stat.isFile() || !writtenByView(file)) {
    throw new InputError(
      file,
      "",
      `${flag} is already there and strata view did not write it`,
      "strata replaces only files it wrote: move it away or choose another name",
    );
  }
}

function writtenByView(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(MARK_WITHIN);
    const n = readSync(fd, head, 0, MARK_WITHIN, 0);
    return head.subarray(0, n).toString("utf8").includes(WRITTEN_BY);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes `text` to `file` through a new file beside it, renamed over it: never through a link, never half a page. */
function writeOwn(file: string, text: string): void {
  const temp = join(dirname(file), `.${process.pid}.strata-view.tmp`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temp, text, { flag: "wx" });
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new InputError(file, "", `cannot write it: ${describeIoError(err)}`);
  }
}
