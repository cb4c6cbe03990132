// Instructions per packet, which other load on the machine does not change:
// `npm run bench:instructions [-- SCENARIO…]` (needs valgrind). Each data-plane
// scenario (BUILDS in dataplane.ts) runs twice under callgrind, carrying N and
// 3 × N packets; (I(3N) − I(N)) / 2N is the cost of one packet — set-up,
// compilation and warm-up cancel out. Wasm is compiled by the optimizing tier
// only (--no-liftoff), so both runs run the same code.
//
// Two counts: everything the process ran (staging included, but also whatever
// else V8 does in the meantime: its run-to-run noise is hundreds of
// instructions per packet), and the wasm code alone — callgrind's count at
// each instruction address joined with V8's listing of the compiled wasm
// functions (--print-wasm-code), which is exact for a given build. Under
// valgrind V8 checks wasm memory bounds with explicit instructions, so both
// run higher than the same code natively.
//
// SCENARIO:bound (l2-exact:bound, router-layered:bound, …) counts the
// scenario's bound kernel instead (bench/bound.ts): the floor of what the
// steps' own work costs with the path known, to set the data plane against.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { boundBuilt, KERNELS, runKernel } from "./bound.js";
import { BUILDS, runStaged } from "./dataplane.js";
import { runScript } from "./script.js";

type Name = keyof typeof BUILDS;
const N = 1 << 16;
const WARM_UP = 1 << 14;

/** A name's suffix that asks for the scenario's bound kernel (bench/bound.ts) rather than its data plane. */
const BOUND = ":bound";

/** The kernel `name` asks for (SCENARIO:bound), or undefined: the data plane. */
export function kernelOf(name: string): (typeof KERNELS)[number] | undefined {
  return name.endsWith(BOUND) ? KERNELS.find((k) => k.scenario === name.slice(0, -BOUND.length)) : undefined;
}

/**
 * Sets scenario `name` up and carries `packets` packets through it (the batches cycle), after a warm-up; for
 * SCENARIO:bound, through its bound kernel, the first batch again and again, as bench:bound runs it.
 */
export function drive(name: string, packets: number): void {
  const kernel = kernelOf(name);
  if (kernel !== undefined) {
    const { loaded, batches } = boundBuilt(kernel);
    const first = batches[0];
    if (first === undefined) throw new Error(`${name}: no batches`);
    for (const count of [WARM_UP, packets]) {
      for (let done = 0; done < count;) {
        const staged = loaded.runner.stage(first);
        runKernel(loaded.dp, kernel, staged, done);
        done += staged.count;
      }
    }
    return;
  }
  const { loaded, batches } = BUILDS[name as Name]();
  for (const count of [WARM_UP, packets]) {
    for (let done = 0, k = 0; done < count; k++) {
      const b = batches[k % batches.length];
      if (b === undefined) break;
      runStaged(loaded, loaded.runner.stage(b), done);
      done += b.count;
    }
  }
}

/** Instructions of one driven run: all of them, and those at the addresses of compiled wasm functions. */
interface Counted {
  readonly total: number;
  readonly wasm: number;
}

/** One driven run of `name` under callgrind, with V8's listing of its wasm code. */
function collect(name: string, packets: number): Counted {
  return profiled(name, packets, (profile, listing, total) => ({
    total,
    wasm: wasmCount(profile, wasmAddresses(listing)),
  }));
}

/** Drives `packets` packets of `name` under callgrind and hands its profile, V8's wasm listing and the instructions
 * it collected to `use`. */
export function profiled<T>(
  name: string,
  packets: number,
  use: (profile: string, listing: string, total: number) => T,
): T {
  const script = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), "strata-instructions-"));
  try {
    const profile = join(dir, "callgrind.out");
    const r = spawnSync(
      "valgrind",
      [
        "--tool=callgrind",
        "--dump-instr=yes",
        `--callgrind-out-file=${profile}`,
        process.execPath,
        "--no-liftoff",
        "--single-threaded",
        "--print-wasm-code",
        script,
        "--drive",
        name,
        String(packets),
      ],
      { encoding: "utf8", maxBuffer: 256 << 20 },
    );
    if (r.error !== undefined) throw new Error(`valgrind: ${r.error.message}`);
    const m = /Collected\s*:\s*(\d+)/.exec(r.stderr);
    if (r.status !== 0 || m?.[1] === undefined) throw new Error(`valgrind failed on ${name}: ${r.stderr.slice(-500)}`);
    return use(readFileSync(profile, "utf8"), r.stdout, Number(m[1]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The instruction addresses of V8's `--print-wasm-code` listing ("0x… offset bytes mnemonic" lines). */
export function wasmAddresses(listing: string): Set<bigint> {
  const addresses = new Set<bigint>();
  for (const m of listing.matchAll(/^(0x[0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s/gm)) addresses.add(BigInt(m[1] ?? "0"));
  return addresses;
}

/**
 * The instructions callgrind counted at each address, from a profile written
 * with --dump-instr=yes: cost lines start with an address, absolute (0x…) or
 * relative to the one before (+n, −n, *), then a line number and the count;
 * the line after a `calls=` line is a call's inclusive cost, not the caller's.
 */
export function addressCounts(profile: string): Map<bigint, number> {
  const counts = new Map<bigint, number>();
  let at = 0n;
  let afterCall = false;
  for (const line of profile.split("\n")) {
    if (line.startsWith("calls=")) {
      afterCall = true;
      continue;
    }
    const first = line.charCodeAt(0);
    const isCost = (first >= 48 && first <= 57) || line[0] === "+" || line[0] === "-" || line[0] === "*";
    if (!isCost) continue;
    const [position = "", , count] = line.split(" ");
    const step = (text: string): bigint => (text.startsWith("0x") ? BigInt(text) : BigInt(Number(text)));
    if (position === "*") at = at + 0n;
    else if (position.startsWith("+")) at += step(position.slice(1));
    else if (position.startsWith("-")) at -= step(position.slice(1));
    else at = step(position);
    if (afterCall) {
      afterCall = false;
      continue;
    }
    if (count !== undefined) counts.set(at, (counts.get(at) ?? 0) + Number(count));
  }
  return counts;
}

/** The instructions callgrind counted at `addresses` (addressCounts). */
export function wasmCount(profile: string, addresses: Set<bigint>): number {
  let sum = 0;
  for (const [at, count] of addressCounts(profile)) if (addresses.has(at)) sum += count;
  return sum;
}

function main(argv: readonly string[]): void {
  if (argv[0] === "--drive") {
    drive(argv[1] ?? "", Number(argv[2]));
    return;
  }
  const names = argv.length > 0 ? argv : Object.keys(BUILDS);
  for (const name of names) {
    if (!(name in BUILDS) && kernelOf(name) === undefined) {
      const kernels = KERNELS.map((k) => k.scenario + BOUND).join(", ");
      throw new Error(`no scenario ${name} (have: ${Object.keys(BUILDS).join(", ")}; kernels: ${kernels})`);
    }
    const one = collect(name, N);
    const three = collect(name, 3 * N);
    const perPacket = (f: (c: Counted) => number): string => ((f(three) - f(one)) / (2 * N)).toFixed(0);
    process.stdout.write(
      `${name}\t${perPacket((c) => c.wasm)} wasm instructions/packet\t${perPacket((c) => c.total)} in all\n`,
    );
  }
}

runScript(import.meta.url, main);
