#!/usr/bin/env node
// strata's command line. main() is the whole program minus the process: tests call
// it with an in-memory Io; the bottom of this file runs it for real.

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { excerpt, InputError, UsageError } from "../errors.js";
import { type Io, StreamSink } from "./io.js";
import { registerPcap } from "./commands/pcap.js";
import { registerCheck } from "./commands/check.js";
import { registerAnalyze } from "./commands/analyze.js";
import { registerRun } from "./commands/run.js";
import { registerTrace } from "./commands/trace.js";
import { registerView } from "./commands/view.js";
import { registerExport } from "./commands/export.js";
import { registerFit } from "./commands/fit.js";
import { registerPlace } from "./commands/place.js";
import { registerServe } from "./commands/serve.js";
import { registerP4Runtime } from "./commands/p4runtime.js";
import { registerDeploy } from "./commands/deploy.js";
import { registerWorker } from "./commands/worker.js";
import { SpecError } from "../description/problems.js";
import { STRATA_VERSION } from "../version.js";
import type { CommandContext } from "./command.js";
import { EXIT_BAD_INPUT, EXIT_CODES_HELP, EXIT_INTERNAL, EXIT_OK } from "./exit-codes.js";

/** Adds a command (its name, flags, help and action) to the program. */
export type Register = (program: Command, ctx: CommandContext) => void;

/**
 * The whole command line as commander knows it: every command's name, flags and help (commands/),
 * and those of `more` (the bin adds bench/'s). A command's implementation is loaded only when it
 * runs, so that `strata --help` or a quick check does not wait for gRPC, the engine or the drawing
 * to load.
 */
export function buildProgram(ctx: CommandContext, more: readonly Register[] = []): Command {
  const program = new Command("strata")
    .description("A data-plane emulator for compositional networks.")
    .version(STRATA_VERSION, "-V, --version")
    .addHelpText("after", `\n${EXIT_CODES_HELP}`)
    .exitOverride();
  registerPcap(program, ctx);
  registerCheck(program, ctx);
  registerAnalyze(program, ctx);
  registerRun(program, ctx);
  registerTrace(program, ctx);
  registerView(program, ctx);
  registerExport(program, ctx);
  registerFit(program, ctx);
  registerPlace(program, ctx);
  registerServe(program, ctx);
  registerP4Runtime(program, ctx);
  registerDeploy(program, ctx);
  registerWorker(program, ctx);
  for (const register of more) register(program, ctx);
  // Every command writes to ctx.io, reports a flag mistake as strata's one line, and returns instead of exiting.
  const configure = (cmd: Command): void => {
    cmd.configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
      outputError: (s) => ctx.io.stderr.write(`strata: ${usageLine(s, commandPath(cmd))}\n`),
    });
    cmd.exitOverride();
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  return program;
}

/** "strata pcap inspect" for the inspect command. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * Commander's error ("error: unknown option '--jsn'\n(Did you mean --json?)") as
 * the problem and fix of strata's one line. Quoted values are cut to an excerpt.
 */
export function usageLine(message: string, command: string): string {
  const text = message.replace(/^error: /, "").replace(/\n$/, "");
  const suggestion = /\n\(Did you mean (.*)\)$/.exec(text);
  const hint = suggestion?.[1];
  const problem = text
    .slice(0, suggestion?.index)
    .replace(/\.$/, "")
    // "… is invalid. it must be …" reads as one sentence; quoted values are left as given.
    .replace(/('[^']*')|\.\s+([A-Za-z])/g, (_m, quoted: string | undefined, letter: string | undefined) =>
      quoted !== undefined ? `'${excerpt(quoted.slice(1, -1))}'` : `: ${(letter ?? "").toLowerCase()}`,
    );
  const usage = `run '${command} --help' for usage`;
  return `${problem} (${hint === undefined ? usage : `did you mean ${hint} ${usage}`})`;
}

/** Runs strata with `argv` (without node and the script), and the commands of `more`; returns the exit code. */
export async function main(argv: readonly string[], io: Io, more: readonly Register[] = []): Promise<number> {
  const ctx: CommandContext = { io, exitCode: EXIT_OK };
  const program = buildProgram(ctx, more);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (err) {
    ctx.exitCode = exitCodeFor(err, io);
  }
  await io.stdout.flush();
  await io.stderr.flush();
  return ctx.exitCode;
}

function exitCodeFor(err: unknown, io: Io): number {
  if (err instanceof CommanderError) {
    // Commander has printed the help, the version or the error line. A command that needs
    // a subcommand and got none ("commander.help", exit code 1) printed its help on stderr.
    return err.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
  }
  if (err instanceof SpecError) {
    for (const line of err.lines()) io.stderr.write(`strata: ${line}\n`);
    return EXIT_BAD_INPUT;
  }
  if (err instanceof InputError || err instanceof UsageError) {
    io.stderr.write(`strata: ${err.message}\n`);
    return EXIT_BAD_INPUT;
  }
  throw err;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** Runs strata as the process: its arguments, standard streams and exit code; with the commands of `more`. */
export function runProcess(more: readonly Register[] = []): void {
  const io: Io = {
    stdout: new StreamSink(process.stdout),
    stderr: new StreamSink(process.stderr),
    stderrIsTTY: process.stderr.isTTY === true,
  };
  main(process.argv.slice(2), io, more).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `strata: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = EXIT_INTERNAL;
    },
  );
}

// Run as a script (node dist/src/cli/main.js): src/'s commands; the bin (bin/strata.ts) adds bench/'s.
if (isEntryPoint()) runProcess();
