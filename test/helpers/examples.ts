// The examples/ folders, told apart: a replay example (a description, captures, the outputs they make) or a
// controller's (its example.json names a "controller": a program on the library's Device, run over packets its test
// sends; test/api/controller-examples.test.ts). The tests that replay, export, analyze or place every example take the
// replay examples only.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;

/** What an example's example.json says of a controller example. */
export interface ControllerExample {
  readonly summary: string;
  /** The controller's module, beside network.yaml. */
  readonly controller: string;
  /** Each packet sent, and what became of it with the controller running. */
  readonly expect: readonly string[];
}

const dirs = readdirSync(join(ROOT, "examples"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

const isController = (name: string): boolean =>
  "controller" in (JSON.parse(readFileSync(join(ROOT, "examples", name, "example.json"), "utf8")) as object);

/** The examples/ folders that replay captures, by name. */
export const REPLAY_EXAMPLES: readonly string[] = dirs.filter((d) => !isController(d));

/** The examples/ folders that run a controller, by name. */
export const CONTROLLER_EXAMPLES: readonly string[] = dirs.filter(isController);
