// Where a scenario's wasm instructions go, by source line: `npm run
// bench:where -- SCENARIO[:bound] [LINES]` (needs valgrind). The scenario runs under
// callgrind twice, carrying N and 3 × N packets, as bench:instructions runs it;
// each run's counts at each instruction address are joined with V8's listing
// of the compiled wasm (which function, which pc offset, and the wasm byte
// offset V8 records for it: "Source positions") and with the build's source
// map (build/release.wasm.map; build/bound.wasm.map for SCENARIO:bound, the
// scenario's bound kernel), and (count(3N) − count(N)) / 2N is a line's
// instructions per packet. Lines are those binaryen kept through its inlining:
// an inlined helper's instructions are often the caller's line's.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { addressCounts, kernelOf, profiled } from "./instructions.js";
import { runScript } from "./script.js";

const N = 1 << 14;
const BUILD = fileURLToPath(new URL("../../build/release.wasm", import.meta.url));
/** SCENARIO:bound's build (bench:instructions drives the kernel there): the data plane's and the kernels'. */
const BOUND_BUILD = fileURLToPath(new URL("../../build/bound.wasm", import.meta.url));

/** An unsigned LEB128 at `at` in `b`: its value and where the next byte is. */
function leb(b: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = b[at++] ?? 0;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

/** Where each function's body starts in the module, by function index (imported functions have none). */
export function bodyStarts(b: Uint8Array): Map<number, number> {
  let at = 8;
  let imported = 0;
  const starts = new Map<number, number>();
  while (at < b.length) {
    const id = b[at++] ?? 0;
    const [size, from] = leb(b, at);
    if (id === 2) imported = functionImports(b, from);
    if (id === 10) {
      const [count, first] = leb(b, from);
      let p = first;
      for (let i = 0; i < count; i++) {
        const [len, body] = leb(b, p);
        starts.set(imported + i, body);
        p = body + len;
      }
    }
    at = from + size;
  }
  return starts;
}

/** How many functions the import section at `at` imports. */
function functionImports(b: Uint8Array, at: number): number {
  let [count, p] = leb(b, at);
  let functions = 0;
  const skipName = (): void => {
    const [len, q] = leb(b, p);
    p = q + len;
  };
  const skipLimits = (): void => {
    const flags = b[p++] ?? 0;
    p = leb(b, p)[1];
    if (flags & 1) p = leb(b, p)[1];
  };
  for (; count > 0; count--) {
    skipName();
    skipName();
    const kind = b[p++];
    if (kind === 0) {
      functions++;
      p = leb(b, p)[1];
    } else if (kind === 1) {
      p++;
      skipLimits();
    } else if (kind === 2) skipLimits();
    else p += 2;
  }
  return functions;
}

/** A source map's mappings as [wasm offset, "file:line"], by offset. */
export function sourceLines(map: { sources: string[]; mappings: string }): [number, string][] {
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const out: [number, string][] = [];
  let column = 0;
  let source = 0;
  let line = 0;
  for (const segment of map.mappings.split(",")) {
    const values: number[] = [];
    let v = 0;
    let shift = 0;
    for (const ch of segment) {
      const digit = B64.indexOf(ch);
      v += (digit & 31) * 2 ** shift;
      shift += 5;
      if (!(digit & 32)) {
        values.push(v % 2 === 1 ? -(v - 1) / 2 : v / 2);
        v = 0;
        shift = 0;
      }
    }
    column += values[0] ?? 0;
    if (values.length < 4) continue;
    source += values[1] ?? 0;
    line += values[2] ?? 0;
    out.push([column, `${map.sources[source] ?? "?"}:${line + 1}`]);
  }
  return out;
}

/** The last entry of `sorted` (by its first element) at or before `at`, or undefined. */
function floor<T>(sorted: readonly (readonly [number, T])[], at: number): T | undefined {
  let lo = 0;
  let hi = sorted.length - 1;
  let found: T | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const entry = sorted[mid];
    if (entry === undefined) break;
    if (entry[0] <= at) {
      found = entry[1];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Each listed instruction's source line: its function's source positions (pc offset → wasm offset) and the map. */
export function linesOf(listing: string, starts: Map<number, number>, lines: [number, string][]): Map<bigint, string> {
  const at = new Map<bigint, string>();
  for (const block of listing.split("--- WebAssembly code ---")) {
    const index = Number(/^index: (\d+)/m.exec(block)?.[1] ?? Number.NaN);
    const start = starts.get(index);
    const positions: [number, number][] = [];
    const table = block.split("Source positions:")[1] ?? "";
    for (const m of table.matchAll(/^\s+([0-9a-f]+)\s+(\d+)\s*$/gm)) {
      positions.push([parseInt(m[1] ?? "0", 16), Number(m[2])]);
    }
    positions.sort((a, b) => a[0] - b[0]);
    for (const m of block.matchAll(/^(0x[0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s/gm)) {
      const position = floor(positions, parseInt(m[2] ?? "0", 16));
      const line = start === undefined || position === undefined ? undefined : floor(lines, start + position);
      at.set(BigInt(m[1] ?? "0"), line ?? `wasm-function[${index}]`);
    }
  }
  return at;
}

/** Instructions by source line, of one run of `name` carrying `packets` packets. */
function byLine(name: string, packets: number, starts: Map<number, number>, lines: [number, string][]) {
  return profiled(name, packets, (profile, listing) => {
    const at = linesOf(listing, starts, lines);
    const sums = new Map<string, number>();
    for (const [address, count] of addressCounts(profile)) {
      const line = at.get(address);
      if (line !== undefined) sums.set(line, (sums.get(line) ?? 0) + count);
    }
    return sums;
  });
}

function main(argv: readonly string[]): void {
  const [name, shown = "40"] = argv;
  if (name === undefined) throw new Error("usage: npm run bench:where -- SCENARIO[:bound] [LINES]");
  const build = kernelOf(name) !== undefined ? BOUND_BUILD : BUILD;
  const module = new Uint8Array(readFileSync(build));
  const starts = bodyStarts(module);
  const lines = sourceLines(
    JSON.parse(readFileSync(`${build}.map`, "utf8")) as { sources: string[]; mappings: string },
  );
  const one = byLine(name, N, starts, lines);
  const three = byLine(name, 3 * N, starts, lines);
  const perPacket = new Map<string, number>();
  for (const line of new Set([...one.keys(), ...three.keys()])) {
    perPacket.set(line, ((three.get(line) ?? 0) - (one.get(line) ?? 0)) / (2 * N));
  }
  const files = new Map<string, number>();
  for (const [line, n] of perPacket)
    files.set(line.replace(/:\d+$/, ""), (files.get(line.replace(/:\d+$/, "")) ?? 0) + n);
  const total = [...perPacket.values()].reduce((a, b) => a + b, 0);
  const rows = (m: Map<string, number>, limit: number): string =>
    [...m]
      .filter(([, n]) => Math.abs(n) >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([what, n]) => `${n.toFixed(1).padStart(8)}  ${what}`)
      .join("\n");
  const head = `${name}: ${total.toFixed(0)} wasm instructions/packet`;
  process.stdout.write(`${head}\n\nby file\n${rows(files, 40)}\n\nby line\n${rows(perPacket, Number(shown))}\n`);
}

runScript(import.meta.url, main);
