// Instructions per packet, which other load on the machine does not change:
// `npm run bench:instructions [-- SCENARIO…]` (needs valgrind). Each data-plane
// scenario (BUILDS in dataplane.ts) runs twice under callgrind, carrying N and
// 3 × N packets; (I(3N) − I(N)) / 2N is the cost of one packet, staging
// included — set-up, compilation and warm-up cancel out. Wasm is compiled by
// the optimizing tier only (--no-liftoff), so both runs run the same code.

import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BUILDS } from "./dataplane.js";

type Name = keyof typeof BUILDS;
const N = 1 << 16;
const WARM_UP = 1 << 14;

/** Sets scenario `name` up and carries `packets` packets through it (the batches cycle), after a warm-up. */
export function drive(name: Name, packets: number): void {
  const { loaded, batches } = BUILDS[name]();
  for (const count of [WARM_UP, packets]) {
    for (let done = 0, k = 0; done < count; k++) {
      const b = batches[k % batches.length];
      if (b === undefined) break;
      loaded.runner.go(loaded.runner.stage(b), done, null);
      done += b.count;
    }
  }
}

/** Callgrind's instruction total for one driven run. */
function collect(name: string, packets: number): number {
  const script = fileURLToPath(import.meta.url);
  const r = spawnSync(
    "valgrind",
    ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, "--no-liftoff", "--single-threaded", script, "--drive", name, String(packets)],
    { encoding: "utf8", maxBuffer: 64 << 20 },
  );
  if (r.error !== undefined) throw new Error(`valgrind: ${r.error.message}`);
  const m = /Collected\s*:\s*(\d+)/.exec(r.stderr);
  if (r.status !== 0 || m?.[1] === undefined) throw new Error(`valgrind failed on ${name}: ${r.stderr.slice(-500)}`);
  return Number(m[1]);
}

function main(argv: readonly string[]): void {
  if (argv[0] === "--drive") {
    drive(argv[1] as Name, Number(argv[2]));
    return;
  }
  const names = argv.length > 0 ? argv : Object.keys(BUILDS);
  for (const name of names) {
    if (!(name in BUILDS)) throw new Error(`no scenario ${name} (have: ${Object.keys(BUILDS).join(", ")})`);
    const one = collect(name, N);
    const three = collect(name, 3 * N);
    process.stdout.write(`${name}\t${((three - one) / (2 * N)).toFixed(0)} instructions/packet\n`);
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
