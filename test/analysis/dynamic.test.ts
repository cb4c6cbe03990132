// Static equals dynamic (issue 20, "Checked, not asserted"): the analysis
// against the wasm data plane, on the random descriptions of the differential
// tests (composed ones included).
//
// - Packet to class: every random packet goes through the data plane with a
//   trace; the analysis, given the packet's classes (read from its bytes level
//   by level), must cross the same links, deliver to the same members, drop at
//   the same members for the same reasons, loop alike and hit the same rows.
// - Class to packet: from each endpoint, every path the analysis finds over
//   all header classes gives a packet built from its classes; the data plane
//   must do with it what the path says (delivered there, or dropped there with
//   that row), and the rest as above.
//
// 10 descriptions of each kind per npm test (a few seconds); more cases:
// STRATA_ANALYZE_RUNS=300 npx vitest run test/analysis/dynamic.test.ts

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CompiledSpec } from "../../src/control/compiled.js";
import type { Injection } from "../../src/control/install.js";
import type { RefInput } from "../../src/model/interpreter.js";
import type { Analysis } from "../../src/analysis/analysis.js";
import { explore, type PathEvent } from "../../src/analysis/explore.js";
import { computeRelations, type Relations } from "../../src/analysis/properties.js";
import { compileText, packetsRecipe, resolvePackets, specRecipe, specText } from "../pipeline/helpers/cases.js";
import { composedRecipe, composedText } from "../pipeline/helpers/composed.js";
import { boundedAnalysis, MAX_CLASSES } from "./helpers/bounded.js";
import {
  differ,
  emulate,
  type Observation,
  packetOf,
  predict,
  record,
  rowName as rowNameOf,
  startOf,
} from "./helpers/observe.js";

const RUNS = Number(process.env["STRATA_ANALYZE_RUNS"] ?? 10);
/** Steps one class-to-packet search may take (about a second); unbounded, one ran 13 minutes. */
const EXPLORE_STEPS = 50_000;

interface Tally {
  cases: number;
  packets: number;
  compared: number;
  witnesses: number;
  witnessesRun: number;
  /** Packets a member sent itself and the data plane delivered, held to the relations. */
  inRelation: number;
  skipped: Map<string, number>;
}

const tally = (): Tally => ({
  cases: 0,
  packets: 0,
  compared: 0,
  witnesses: 0,
  witnessesRun: 0,
  inRelation: 0,
  skipped: new Map(),
});
const skip = (t: Tally, why: string): void => {
  t.skipped.set(why, (t.skipped.get(why) ?? 0) + 1);
};

/**
 * A packet a member sends itself and the data plane delivers to another member: the pair is in the
 * relation of a component that holds both (`reachable`, or with bridging or subduction), or says why not.
 */
function inRelation(a: Analysis, r: Relations, inj: Injection, o: Observation): string {
  if (inj.kind !== "self") return "";
  for (const name of o.delivered) {
    const v = a.memberNamed(name);
    if (v === undefined || v.index === inj.member) continue;
    const comps = a.componentsOf(inj.member).filter((k) => k.has[v.index] === 1);
    if (comps.length === 0) continue; // delivered in another network: popped into it, no pair of one relation
    if (!comps.some((k) => r.relation.get(k)?.reaches(inj.member, v.index) === true))
      return (
        `delivered to ${name}, but ${a.member(inj.member).member.qualified} → ${name} is in no relation ` +
        `of ${comps.map((k) => k.name).join(", ")}`
      );
  }
  return "";
}

/** Packet to class: each packet's trace against the analysis of its classes, and its delivery against the relations. */
function packetsAgree(
  text: string,
  c: CompiledSpec,
  a: Analysis,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  hopLimit: number,
  t: Tally,
): void {
  const r = computeRelations(a);
  const seen = emulate(c, injections, inputs, hopLimit);
  if (seen === undefined) return skip(t, "not installed");
  inputs.forEach((p, i) => {
    t.packets++;
    const w = seen[i];
    const inj = injections[p.endpoint];
    if (w === undefined || inj === undefined) return;
    if ("skip" in w) return skip(t, w.skip);
    const missing = inRelation(a, r, inj, w);
    if (missing !== "")
      throw new Error(
        `packet ${i} (${Buffer.from(p.bytes).toString("hex")}) at ${JSON.stringify(inj)}: ${missing}\nspec:\n${text}`,
      );
    if (inj.kind === "self" && w.delivered.size > 0) t.inRelation++;
    const x = predict(a, inj, p.bytes, hopLimit);
    if ("skip" in x) return skip(t, x.skip);
    const d = differ(w, x);
    if (d !== "")
      throw new Error(
        `packet ${i} (${Buffer.from(p.bytes).toString("hex")}) at ${JSON.stringify(inj)}, ` +
          `hop limit ${hopLimit}:\n${d}\nspec:\n${text}`,
      );
    t.compared++;
  });
}

/** The endpoints packets may enter at: links members send on, inbound external links, members, sessions. */
function endpoints(c: CompiledSpec): Injection[] {
  const out: Injection[] = [];
  for (const l of c.links)
    if (l.sender >= 0 || l.receivers.length > 0)
      out.push({ kind: "link", member: l.sender, session: 0, link: l.index });
  for (const m of c.members) {
    out.push({ kind: "self", member: m.index, session: 0, link: -1 });
    for (const r of m.tables.send?.spec?.rows ?? [])
      if (r.session !== undefined) out.push({ kind: "session", member: m.index, session: r.session, link: -1 });
  }
  return out;
}

/** What a path's end says, in the data plane's names. */
function expectation(a: Analysis, e: PathEvent): { what: string; holds: (o: Observation) => boolean } | undefined {
  const member = a.compiled.members[e.member]?.qualified ?? "?";
  const last = e.path.at(-1);
  const row = e.row ?? (last?.kind === "row" ? last : undefined);
  const rowName =
    row?.kind === "row"
      ? rowNameOf(a.compiled, a.compiled.members[row.member]?.qualified ?? "?", row.role, row.row)
      : undefined;
  if (e.kind === "deliver")
    return {
      what: `delivered to ${member}`,
      holds: (o) => o.delivered.has(member) && (rowName === undefined || o.rows.has(rowName)),
    };
  if (e.kind === "drop" && e.reason !== "loop")
    return {
      what: `dropped at ${member} (${e.reason ?? "?"}${rowName === undefined ? "" : `, ${rowName}`})`,
      holds: (o) => o.drops.has(`${member} ${e.reason ?? "?"}`) && (rowName === undefined || o.rows.has(rowName)),
    };
  if (e.kind === "exit")
    return {
      what: `left on ${a.compiled.links[e.link]?.qualified ?? "?"}`,
      holds: (o) => o.links.has(a.compiled.links[e.link]?.qualified ?? "?"),
    };
  return undefined;
}

/** Class to packet: a packet built from each path's classes does what the path says. */
function classesAgree(
  text: string,
  c: CompiledSpec,
  a: Analysis,
  pick: number,
  hopLimit: number,
  t: Tally,
  perEndpoint = 12,
): void {
  const all = endpoints(c);
  const chosen = [all[pick % Math.max(all.length, 1)], all[(pick * 7 + 3) % Math.max(all.length, 1)]].filter(
    (x): x is Injection => x !== undefined,
  );
  const injections: Injection[] = [];
  const inputs: RefInput[] = [];
  const expected: { what: string; holds: (o: Observation) => boolean }[] = [];
  for (const inj of chosen) {
    const ends: PathEvent[] = [];
    // Bounded: from a session in a circle of layers every path ends approximate, and there are millions.
    explore(a, startOf(inj), { hopLimit, kinds: ENDS, budget: EXPLORE_STEPS }, (e) => {
      if (!e.approximate) ends.push(e);
      return ends.length < 4 * perEndpoint;
    });
    // Spread over the paths found: every k-th.
    const step = Math.max(1, Math.floor(ends.length / perEndpoint));
    for (let k = 0; k < ends.length; k += step) {
      const e = ends[k];
      if (e === undefined) continue;
      t.witnesses++;
      const ex = expectation(a, e);
      // A path that ends in bad-header pops a payload no header of the overlay's design can be read from: none.
      const bytes =
        ex === undefined
          ? undefined
          : packetOf(a, inj, e.start, e.kind === "drop" && e.reason === "bad-header" ? new Uint8Array(0) : undefined);
      if (ex === undefined || bytes === undefined) {
        skip(t, "no packet of the classes");
        continue;
      }
      const at = injections.findIndex(
        (j) => j.kind === inj.kind && j.member === inj.member && j.link === inj.link && j.session === inj.session,
      );
      inputs.push({
        bytes,
        origLen: bytes.length,
        tsSec: 0,
        tsNsec: 0,
        endpoint: at >= 0 ? at : injections.push(inj) - 1,
      });
      expected.push(ex);
    }
  }
  if (inputs.length === 0) return;
  const seen = emulate(c, injections, inputs, hopLimit);
  if (seen === undefined) return skip(t, "not installed");
  inputs.forEach((p, i) => {
    const w = seen[i];
    const ex = expected[i];
    const inj = injections[p.endpoint];
    if (w === undefined || ex === undefined || inj === undefined) return;
    if ("skip" in w) return skip(t, w.skip);
    const describe = (): string =>
      `packet ${Buffer.from(p.bytes).toString("hex")} at ${JSON.stringify(inj)}, hop limit ${hopLimit}\nspec:\n${text}`;
    if (!ex.holds(w)) {
      const plane = JSON.stringify({
        ...w,
        links: [...w.links],
        delivered: [...w.delivered],
        drops: [...w.drops],
        rows: [...w.rows],
      });
      throw new Error(`the analysis says ${ex.what}; the data plane: ${plane}\n${describe()}`);
    }
    const x = predict(a, inj, p.bytes, hopLimit);
    if (!("skip" in x)) {
      const d = differ(w, x);
      if (d !== "") throw new Error(`${d}\n${describe()}`);
    }
    t.witnessesRun++;
  });
}

function report(name: string, t: Tally): void {
  const skipped = [...t.skipped].map(([k, v]) => `${k} ${v}`).join(", ");
  console.log(
    `${name}: ${t.cases} descriptions, ${t.compared}/${t.packets} packets ` +
      `compared, ${t.witnessesRun}/${t.witnesses} class witnesses run, ${t.inRelation} deliveries in the ` +
      `relations${skipped === "" ? "" : ` (skipped: ${skipped})`}`,
  );
}

const hopLimits = fc.constantFrom(3, 8, 64);
const ENDS = new Set(["deliver", "drop", "exit"] as const);

/** Descriptions drawn from `recipe`, written out by `text`; `share`: the least part of the packets compared. */
function agreeOn<R>(
  name: string,
  recipe: fc.Arbitrary<R>,
  text: (r: R) => string,
  share: number,
  seed = process.env["STRATA_SEED"] === undefined ? undefined : Number(process.env["STRATA_SEED"]),
): void {
  const t = tally();
  fc.assert(
    fc.property(recipe, packetsRecipe(4, 12), hopLimits, fc.nat(1000), (r, packets, hopLimit, pick) => {
      const spec = text(r);
      const c = compileText(spec);
      if (c === undefined) return;
      const a = boundedAnalysis(c);
      if (a === undefined) return skip(t, `over ${MAX_CLASSES} classes`);
      t.cases++;
      const { injections, inputs } = resolvePackets(c, packets);
      packetsAgree(spec, c, a, injections, inputs, hopLimit, t);
      classesAgree(spec, c, a, pick, hopLimit, t);
    }),
    { numRuns: RUNS, ...(seed === undefined ? {} : { seed }) },
  );
  report(name, t);
  expect(t.compared).toBeGreaterThan(t.packets * share);
  expect(t.witnessesRun).toBeGreaterThan(0);
}

describe("static = dynamic: the analysis against the wasm data plane", () => {
  it("on random descriptions", () => agreeOn("random", specRecipe, specText, 1 / 3), 1_800_000);
  it(
    "on layered, subducted and bridged descriptions",
    () => agreeOn("composed", composedRecipe, composedText, 1 / 4),
    1_800_000,
  );
  // Seeds that once failed (rows of one action merged in a class: its witness's row was named for every packet of it).
  it.each([373588389, -1560749509])("found by the property tests: seed %i", (seed) => {
    agreeOn("random", specRecipe, specText, 1 / 3, seed);
    agreeOn("composed", composedRecipe, composedText, 1 / 4, seed);
  });
});
