// The bench scripts' flags, read by node's parseArgs: what is wrong with them
// is one line and exit code 2, as with strata's own commands, never a stack
// trace or a run with NaN in it.

import { parseArgs, type ParseArgsConfig } from "node:util";

/** parseArgs(config); or, where the flags are wrong (an unknown flag, a flag without its value, a stray argument), what
 * is wrong with them. */
export function readFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> | string {
  try {
    return parseArgs(config);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) return (err as Error).message;
    throw err;
  }
}

/**
 * `given` as a number above 0 and at most `most` (a whole one with `whole`); or what is wrong
 * with it, naming it as `what`. Each caller's top keeps a run within minutes and memory.
 */
export function positive(what: string, given: string, most: number, whole = false): number | string {
  const n = Number(given);
  if (given.trim() === "" || !Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n))) {
    return `${what} ${given} is not a ${whole ? "whole number" : "number"} above 0`;
  }
  if (n > most) return `${what} ${given} is too large (at most ${most.toLocaleString("en-US")})`;
  return n;
}

/** Says what is wrong and how the script is called, on stderr, and sets exit code 2. */
export function refuse(script: string, wrong: string, usage: string): void {
  process.stderr.write(`${script}: ${wrong}\nusage: ${usage}\n`);
  process.exitCode = 2;
}
