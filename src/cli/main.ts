#!/usr/bin/env node
// strata's command line. main() is the whole program minus the process: tests call
// it with an in-memory Io; the bottom of this file runs it for real.

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { InputError, UsageError } from "../errors.js";
import { type Io, StreamSink } from "./io.js";
import { registerPcap } from "./pcap.js";
import { registerCheck } from "./check.js";
import { registerRun } from "./run.js";
import { registerTrace } from "./trace.js";
import { registerBench } from "./bench.js";
import { registerExport } from "./export.js";
import { SpecError } from "../spec/problems.js";

/** Exit codes (DESIGN.md §5). */
export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;
export const EXIT_BAD_INPUT = 2;

/** What a command's action reports back to main(). */
export interface CommandContext {
  io: Io;
  exitCode: number;
}

export function buildProgram(ctx: CommandContext): Command {
  const program = new Command("strata")
    .description("A data-plane emulator for compositional networks.")
    .version(VERSION, "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .exitOverride();
  registerPcap(program, ctx);
  registerCheck(program, ctx);
  registerRun(program, ctx);
  registerTrace(program, ctx);
  registerBench(program, ctx);
  registerExport(program, ctx);
  // Every subcommand inherits the output and exit behaviour.
  const inherit = (cmd: Command): void => {
    for (const sub of cmd.commands) {
      sub.configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s) });
      sub.exitOverride();
      sub.showHelpAfterError("(run with --help for usage)");
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

const VERSION = "0.1.0";

/** Runs strata with `argv` (without node and the script); returns the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const ctx: CommandContext = { io, exitCode: EXIT_OK };
  const program = buildProgram(ctx);
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
    // Help and version are not errors; commander already printed the message otherwise.
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
      return EXIT_OK;
    }
    if (err.exitCode === 0) return EXIT_OK;
    return EXIT_BAD_INPUT;
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

if (isEntryPoint()) {
  const io: Io = {
    stdout: new StreamSink(process.stdout),
    stderr: new StreamSink(process.stderr),
    stderrIsTTY: process.stderr.isTTY === true,
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`strata: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 70;
    },
  );
}
