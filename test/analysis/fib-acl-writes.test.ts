// Random writes to a FIB under a ternary ACL (issue 30): a write moves the headers of its prefix between the FIB's
// fates (src/analysis/fate-owner.ts), the headers joining the class of their new fates where one has them. After each
// write the running analysis has the classes an analysis afresh of the same tables has — the same partition of the
// headers, checked on headers drawn at and around every prefix's edges — and says the same: the same verdicts, the
// same member pairs reached.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RowChange } from "../../src/analysis/analysis.js";
import { liveClasses } from "../../src/analysis/live-rebuild.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { compileText } from "../pipeline/helpers/cases.js";
import { fibRouter } from "./helpers/generate.js";

const PREFIXES = 48;
const ACL_ROWS = 24;

/** The description `yaml` with its FIB's rows as the writes left them: row i out when `installed[i]` is false, its next
 * hop `hops[i]`. An analysis of it is made afresh, with no write behind it. */
function written(yaml: string, installed: readonly boolean[], hops: readonly string[]): string {
  const lines = yaml.trimEnd().split("\n");
  const first = lines.indexOf("          rows:", lines.lastIndexOf("        forward:")) + 1;
  const fib = lines
    .slice(first)
    .flatMap((l, i) => (installed[i] === false ? [] : [l.replace(/out: \d+/, `out: ${hops[i]}`)]));
  return `${[...lines.slice(0, first), ...fib].join("\n")}\n`;
}

/** What the analysis says, its last update's cost aside, and which member reaches which. */
function says(live: LiveAnalysis): string[] {
  const pairs = [...live.relations.relation].flatMap(([c, rel]) =>
    c.members.flatMap((m0) => c.members.filter((m1) => rel.reaches(m0, m1)).map((m1) => `${c.name} ${m0}>${m1}`)),
  );
  return [live.line().replace(/; last update.*$/, ""), ...pairs];
}

/** Headers at the edges of every prefix of the FIB and of the ACL (first and last address, and one past), with the
 * ACL's protocols and ports: where two partitions of the headers would differ. */
function edgeHeaders(c: CompiledSpec): Map<string, bigint>[] {
  const dsts = new Set<bigint>([0n]);
  const srcs = new Set<bigint>([0n]);
  const ports = new Set<bigint>([0n]);
  const protos = new Set<bigint>([0n]);
  const rows = c.members.flatMap((m) => Object.values(m.tables).flatMap((t) => t?.spec?.rows ?? []));
  for (const r of rows)
    for (const [field, p] of r.match) {
      const values =
        p.kind === "prefix"
          ? [p.value, p.value + (1n << BigInt(32 - p.len)) - 1n, p.value + (1n << BigInt(32 - p.len))]
          : p.kind === "exact"
            ? [p.value]
            : p.kind === "ternary"
              ? [p.value, p.value | (~p.mask & 0xffffn)]
              : [];
      const into = field === "dst" ? dsts : field === "src" ? srcs : field === "proto" ? protos : ports;
      const bits = field === "dst" || field === "src" ? 32n : field === "proto" ? 8n : 16n;
      for (const v of values) into.add(v & ((1n << bits) - 1n));
    }
  const out: Map<string, bigint>[] = [];
  const [src, port, proto] = [[...srcs], [...ports], [...protos]];
  let k = 0;
  for (const dst of dsts)
    out.push(
      new Map([
        ["dst", dst],
        ["src", src[k % src.length] ?? 0n],
        ["proto", proto[k % proto.length] ?? 0n],
        ["dport", port[k++ % port.length] ?? 0n],
      ]),
    );
  return out;
}

/** Whether two classifications of the same headers are one partition (two headers share a class in both or neither). */
function samePartition(a: readonly number[], b: readonly number[]): boolean {
  const ab = new Map<number, number>();
  const ba = new Map<number, number>();
  return a.every((x, i) => {
    const y = b[i] ?? -1;
    if ((ab.get(x) ?? y) !== y || (ba.get(y) ?? x) !== x) return false;
    ab.set(x, y);
    ba.set(y, x);
    return true;
  });
}

describe("random writes to a FIB under a ternary ACL: the classes and verdicts of an analysis afresh", () => {
  it("after each write", () => {
    const yaml = fibRouter(PREFIXES, ACL_ROWS, 7);
    const c = compileText(yaml);
    if (c === undefined) throw new Error("the FIB router does not compile");
    const fib = c.members.find((m) => m.qualified === "ip.r")?.tables.forward?.spec?.rows ?? [];
    const actions = fib.map((r) => r.action);
    const headers = edgeHeaders(c);
    const write = fc.record({
      row: fc.nat({ max: fib.length - 1 }),
      kind: fc.constantFrom("out", "in", "next hop"),
      hop: fc.nat({ max: actions.length - 1 }),
    });
    const outOf = (a: (typeof actions)[number] | undefined): string => (a?.kind === "out" ? a.outLinks.join(",") : "");
    fc.assert(
      fc.property(fc.array(write, { minLength: 4, maxLength: 8 }), (writes) => {
        const live = new LiveAnalysis(c);
        const installed = fib.map(() => true);
        const hops = actions.map(outOf);
        for (const w of writes) {
          const action = actions[w.hop];
          const change: RowChange =
            w.kind === "next hop" && action !== undefined
              ? { member: "ip.r", role: "forward", row: w.row, installed: true, action }
              : { member: "ip.r", role: "forward", row: w.row, installed: w.kind !== "out" };
          live.apply([change]);
          installed[w.row] = change.installed;
          if (change.action !== undefined) hops[w.row] = outOf(change.action);
          const now = compileText(written(yaml, installed, hops));
          if (now === undefined) throw new Error("the written FIB does not compile");
          const fresh = new LiveAnalysis(now);
          expect(liveClasses(live.analysis)).toBe(liveClasses(fresh.analysis));
          const [s0, s1] = [live, fresh].map((x) => x.analysis.spaces.all()[0]);
          if (s0 === undefined || s1 === undefined) throw new Error("no IPv4 header space");
          const [k0, k1] = [s0, s1].map((x) => headers.map((h) => x.classify(h)));
          expect(samePartition(k0 ?? [], k1 ?? [])).toBe(true);
          expect(says(live)).toEqual(says(fresh));
        }
      }),
      { numRuns: 6 },
    );
  });
});
