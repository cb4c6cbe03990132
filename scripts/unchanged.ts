// Whether an npm script's last passing run saw the same inputs, for `npm test`'s checks and wasm
// builds (`node dist/scripts/parallel.js --skip-unchanged NAME...`): a script in INPUTS that passed
// is remembered in dist/.unchanged/NAME as a hash of what decides its answer — its command line, the
// files it reads (every file under its folders, by path and content), the installed packages
// (node_modules/.package-lock.json: the tools' versions) — and of the files it writes. The same hash
// again, its outputs as it left them, and it is not run: deterministic tools give the same answer on
// the same input. A fresh clone, or a removed dist/, runs everything.

import { createHash, type Hash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
const STAMPS = join(ROOT, "dist", ".unchanged");

/** What a script reads (folders and files, from the root) and writes. */
interface Inputs {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
}

const WASM_READS = ["assembly", "asconfig.json"];

/** The scripts that may be skipped, and what each reads and writes. */
export const INPUTS: Readonly<Record<string, Inputs>> = {
  typecheck: { reads: ["src", "bench", "bin", "test", "scripts", "vitest.config.ts", "tsconfig.json"], writes: [] },
  circles: { reads: ["src", "assembly", "bench", "bin"], writes: [] },
  "wasm:release": { reads: WASM_READS, writes: ["build/release.wasm", "build/release.wasm.map"] },
  "wasm:bound": { reads: WASM_READS, writes: ["build/bound.wasm", "build/bound.wasm.map"] },
};

/** Every file under `path` (itself, if a file), by path and content, into `hash`, in a stable order. */
function hashTree(hash: Hash, path: string): void {
  const full = join(ROOT, path);
  if (!existsSync(full)) {
    hash.update(`missing ${path}\0`);
    return;
  }
  if (statSync(full).isDirectory()) {
    for (const name of readdirSync(full).sort()) hashTree(hash, `${path}/${name}`);
    return;
  }
  const bytes = readFileSync(full);
  hash.update(`${path} ${bytes.length}\0`).update(bytes);
}

/** The hash of what decides the script's answer: its command line, what it reads, the installed packages. */
function readsHash(name: string, inputs: Inputs): string {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts;
  const hash = createHash("sha256").update(`${name} ${scripts[name] ?? ""}\0`);
  for (const path of [...inputs.reads, "node_modules/.package-lock.json"]) hashTree(hash, path);
  return hash.digest("hex");
}

/** The hash of what the script wrote. */
function writesHash(inputs: Inputs): string {
  const hash = createHash("sha256");
  for (const path of inputs.writes) hashTree(hash, path);
  return hash.digest("hex");
}

const stampFile = (name: string): string => join(STAMPS, name.replaceAll(":", "-"));

/**
 * What `name` reads now, taken before it runs (so that a file changed while it runs is not taken as checked), or
 * undefined for a script that is always run.
 */
export function readsNow(name: string): string | undefined {
  const inputs = INPUTS[name];
  return inputs === undefined ? undefined : readsHash(name, inputs);
}

/** Whether `name` passed last on `reads` (from readsNow), its outputs untouched since. */
export function unchanged(name: string, reads: string | undefined): boolean {
  const inputs = INPUTS[name];
  if (inputs === undefined || reads === undefined) return false;
  try {
    return readFileSync(stampFile(name), "utf8") === `${reads} ${writesHash(inputs)}\n`;
  } catch {
    return false;
  }
}

/** Remembers that `name` passed on `reads` (from readsNow, before it ran), with the outputs it left. */
export function passed(name: string, reads: string | undefined): void {
  const inputs = INPUTS[name];
  if (inputs === undefined || reads === undefined) return;
  mkdirSync(STAMPS, { recursive: true });
  writeFileSync(stampFile(name), `${reads} ${writesHash(inputs)}\n`);
}
