// `strata view SPEC --out PAGE`: the description as a picture — one self-contained HTML page.

import { closeSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import type { Command } from "commander";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { describeIoError, InputError } from "../errors.js";
import { realOrResolved } from "../out-dir.js";
import { viewGraph } from "../view/graph.js";
import { layOut } from "../view/layout.js";
import { pageData, renderPage, WRITTEN_BY } from "../view/page.js";
import { linkLabel, renderSvg } from "../view/svg.js";
import { fileSize } from "./format.js";
import type { CommandContext } from "./command.js";

interface ViewFlags {
  out: string;
}

export function registerView(program: Command, ctx: CommandContext): void {
  program
    .command("view")
    .description("draw a description as one HTML page")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption("--out <page.html>", "write the page: one self-contained HTML file")
    .addHelpText(
      "after",
      `
The page needs no network: its script, styles and data are inside it. Members of one machine
stand in one column; each network is a band, overlays above the networks they are layered on.

strata view replaces only a file it wrote (never the description).

Exit codes: 0 done; 2 a bad description, flag or output file.
All exit codes: strata --help.`,
    )
    .action(async (spec: string, flags: ViewFlags) => {
      await view(spec, flags, ctx);
    });
}

async function view(specFile: string, flags: ViewFlags, ctx: CommandContext): Promise<void> {
  // The output is checked before anything is read or written.
  checkOutput("--out", flags.out, [specFile]);
  const compiled = compile(loadSpec(specFile));
  const graph = viewGraph(compiled);
  const layout = await layOut(graph, new Map(graph.links.map((l) => [l.capture, linkLabel(l, undefined)])));
  const members = graph.nodes.filter((n) => n.kind === "member").length;
  const what = `${graph.networks.length} networks, ${members} members, ${graph.links.length} links`;
  const page = renderPage(pageData(graph, undefined), renderSvg(graph, layout));
  writeOwn(flags.out, page);
  ctx.io.stdout.write(`wrote ${flags.out} (${fileSize(Buffer.byteLength(page))}): ${what}\n`);
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
      throw new InputError(file, "", `${flag} names an input of strata view, ${input}`, "write the page somewhere else");
    }
  }
  let stat;
  try {
    stat = lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new InputError(file, "", `${flag} cannot be written: ${describeIoError(err)}`);
  }
  if (stat.isSymbolicLink()) throw new InputError(file, "", `${flag} is a symbolic link and strata never writes through one`, "name the file itself");
  if (stat.isDirectory()) throw new InputError(file, "", `${flag} is a directory`, `name a file in it, e.g. ${join(file, flag === "--svg" ? "topology.svg" : "page.html")}`);
  if (!stat.isFile() || !writtenByView(file)) {
    throw new InputError(file, "", `${flag} is already there and strata view did not write it`, "strata replaces only files it wrote: move it away or choose another name");
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
