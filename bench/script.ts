// A bench module run as a script (`node dist/bench/lpm.js`), not imported by another.

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Whether the module at `moduleUrl` (its import.meta.url) is the one node was started with. */
export function isScript(moduleUrl: string): boolean {
  const started = process.argv[1];
  return started !== undefined && realpathSync(started) === fileURLToPath(moduleUrl);
}

/** Runs `main` with the script's arguments when the module is the script: an error is one line and exit code 1. */
export function runScript(moduleUrl: string, main: (args: string[]) => void): void {
  if (!isScript(moduleUrl)) return;
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
