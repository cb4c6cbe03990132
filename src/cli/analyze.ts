// `strata analyze SPEC [--json]`: the model's reachability relations over header
// classes (docs/analysis.md) and its properties, each holding or failing with
// counterexamples; or, with a query flag, one answer: which classes go from an
// endpoint to a member (--from/--to [--header]), the loops, the black holes,
// the members nothing reaches, equivalence with another description. The
// analysis runs within a budget (--max-classes, --time-limit): cut short, it
// prints what it found, a last line saying what it could not tell, and exits 3.

import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import { loadSpec } from "../description/load.js";
import { parsePattern } from "../description/patterns.js";
import type { Pattern } from "../description/types.js";
import { excerpt, UsageError } from "../errors.js";
import { Analysis } from "../analysis/analysis.js";
import { orCut, type Stop } from "../analysis/budget.js";
import type { Start } from "../analysis/explore.js";
import { type AnalysisReport, computeRelations, type PropertyResult, report } from "../analysis/properties.js";
import {
  blackHoles,
  type Equivalence,
  equivalence,
  type Finding,
  loops,
  type RouteAnswer,
  routes,
  unreachable,
} from "../analysis/queries.js";
import type { Io } from "./io.js";
import { analysisBudget, type BudgetFlags, classesMade, stopReason } from "./analysis-budget.js";
import { EXIT_INCOMPLETE, EXIT_OK, EXIT_PROBLEM } from "./exit-codes.js";

export interface AnalyzeFlags {
  json?: boolean;
  from?: string;
  to?: string;
  header?: string;
  loops?: boolean;
  blackHoles?: boolean;
  unreachable?: boolean;
  equivalent?: string;
  hopLimit: number;
  maxSteps: number;
  maxClasses: number;
  /** Seconds. */
  timeLimit: number;
}

/** Lines of a list printed as text; --json has them all. */
const LISTED = 20;

export function runAnalyze(file: string, flags: AnalyzeFlags, io: Io): number {
  if (flags.to !== undefined && flags.from === undefined)
    throw new UsageError("--to needs --from: where the packets enter (run 'strata analyze --help' for usage)");
  if (flags.from !== undefined && flags.to === undefined)
    throw new UsageError("--from needs --to: the member they should reach (run 'strata analyze --help' for usage)");
  if (flags.header !== undefined && flags.from === undefined)
    throw new UsageError(
      "--header needs --from and --to: it narrows the headers that enter at " +
        "--from (run 'strata analyze --help' for usage)",
    );
  const compiled = compile(loadSpec(file));
  const query = flags.from === undefined ? undefined : routeQuery(compiled, flags);
  const otherCompiled = flags.equivalent === undefined ? undefined : compile(loadSpec(flags.equivalent));
  const { budget, done } = analysisBudget(flags, io);
  try {
    const a = new Analysis(compiled, {
      budget,
      hopLimit: flags.hopLimit,
      ...(query?.header === undefined ? {} : { patterns: new Map([[query.design, [query.header]]]) }),
    });
    const other =
      otherCompiled === undefined
        ? undefined
        : new Analysis(otherCompiled, { spaces: a.spaces, hopLimit: flags.hopLimit });
    // Diagram work that cannot stop half-way and passes the budget (a class put in words, a row's wins) ends with what
    // was cut short, never an internal error.
    const cutShort = (stop: Stop): number => {
      const cut = cutLine(stop, flags, "nothing was answered (the description is valid)");
      const file = a.compiled.spec.file;
      io.stdout.write(flags.json === true ? `${JSON.stringify({ file, ok: false, cut })}\n` : `${cut}\n`);
      return EXIT_INCOMPLETE;
    };
    return orCut(budget, () => answer(a, other, query, flags, io), cutShort);
  } finally {
    done();
  }
}

/** Runs what was asked of the analysis, prints it, and returns the exit code. */
function answer(
  a: Analysis,
  other: Analysis | undefined,
  query: RouteQuery | undefined,
  flags: AnalyzeFlags,
  io: Io,
): number {
  const file = a.compiled.spec.file;
  const r = computeRelations(a);
  const asked =
    query !== undefined ||
    flags.loops === true ||
    flags.blackHoles === true ||
    flags.unreachable === true ||
    other !== undefined;
  if (!asked) {
    const rep = report(a, r);
    const cut = rep.stop === undefined ? undefined : cutLine(rep.stop, flags, provenOf(rep));
    io.stdout.write(
      flags.json === true
        ? `${JSON.stringify(cut === undefined ? rep : { ...rep, cut })}\n`
        : formatReport(rep, cut, classesMade(a.spaces)),
    );
    return cut !== undefined ? EXIT_INCOMPLETE : rep.ok ? EXIT_OK : EXIT_PROBLEM;
  }
  const stopped = a.budget.stopped;
  if (!a.built && stopped !== undefined) {
    // No classes to ask about: the line says why.
    const cut = cutLine(stopped, flags, "nothing was answered (the description is valid)");
    io.stdout.write(flags.json === true ? `${JSON.stringify({ file, ok: false, cut })}\n` : `${cut}\n`);
    return EXIT_INCOMPLETE;
  }
  const answers = queryAnswers(a, r, other, query, flags);
  const good = answers.every((x) => x.ok);
  const out: Record<string, unknown> = { file, ...Object.fromEntries(answers.map((x) => [x.key, x.value])), ok: good };
  const text = answers.map((x) => x.text);
  // A budget that stopped the analysis leaves the answers partial: a good one found stands (a route that gets there);
  // any other is not known.
  const stop = a.budget.stopped;
  const cut =
    stop === undefined
      ? undefined
      : cutLine(stop, flags, good ? "the answers above hold" : "the answers above are what it found, not all there is");
  if (cut !== undefined) {
    out["cut"] = cut;
    text.push(`${cut}\n`);
  }
  io.stdout.write(
    flags.json === true
      ? `${JSON.stringify(out, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v))}\n`
      : text.join(""),
  );
  return cut !== undefined && !good ? EXIT_INCOMPLETE : good ? EXIT_OK : EXIT_PROBLEM;
}

/** One query's answer: its key in --json, its text, and whether it is the answer hoped for. */
interface Answer {
  readonly key: string;
  readonly value: unknown;
  readonly text: string;
  readonly ok: boolean;
}

/** The answers to the queries asked, in the order they print. */
function queryAnswers(
  a: Analysis,
  r: ReturnType<typeof computeRelations>,
  other: Analysis | undefined,
  query: RouteQuery | undefined,
  flags: AnalyzeFlags,
): Answer[] {
  const answers: Answer[] = [];
  if (query !== undefined) {
    const found = routeAnswer(a, query, flags);
    answers.push({ key: "route", value: found, text: formatRoutes(found), ok: found.reach.length > 0 });
  }
  if (flags.loops === true) {
    const found = loops(a, r);
    const line = (f: Finding): string => `${f.component}: ${f.header} comes back to ${f.at}`;
    const text = formatFindings("loops", "no header class loops", found, line);
    answers.push({ key: "loops", value: found, text, ok: found.length === 0 });
  }
  if (flags.blackHoles === true) {
    const found = blackHoles(a, r);
    const none = "no header class that enters a member is dropped by a miss";
    const text = formatFindings("black holes", none, found, (f) => `${f.component}: ${f.header} → ${f.at}`);
    answers.push({ key: "blackHoles", value: found, text, ok: found.length === 0 });
  }
  if (flags.unreachable === true) {
    const found = unreachable(a, r);
    const text =
      found.length === 0
        ? "unreachable: none (every member is reached by some header)\n"
        : `unreachable:\n${found.map((f) => `  ${f.component}: ${f.members.join(", ")}\n`).join("")}`;
    answers.push({ key: "unreachable", value: found, text, ok: found.length === 0 });
  }
  if (other !== undefined) {
    const eq = a.built && other.built ? equivalence(a, other) : undefined;
    const text = eq === undefined ? "" : formatEquivalence(a.compiled.spec.file, flags.equivalent ?? "", eq);
    answers.push({ key: "equivalent", value: eq ?? { holds: false, complete: false }, text, ok: eq?.holds === true });
  }
  return answers;
}

/** The header classes that go from --from to --to (narrowed by --header). */
function routeAnswer(a: Analysis, query: RouteQuery, flags: AnalyzeFlags): RouteAnswer {
  const space = a.member(query.member).space;
  const pred = query.header === undefined ? -1 : space.predicate(query.header);
  const atoms = pred < 0 ? undefined : space.atomsOf(pred).filter((x) => !space.isDead(x));
  const hops = query.header === undefined ? undefined : space.hops(query.header);
  return routes(a, query.start, query.from, query.to, {
    hopLimit: flags.hopLimit,
    budget: flags.maxSteps,
    ...(atoms === undefined ? {} : { atoms }),
    ...(hops === undefined ? {} : { hops }),
  });
}

/** The last line of an analysis its budget stopped: why, what it told, and the flag that runs it in full. */
function cutLine(stop: Stop, flags: BudgetFlags, told: string): string {
  const { why, lift } = stopReason(stop, flags);
  return `cut short: ${why}; ${told}${lift === "" ? "" : ` (${lift} runs it in full)`}`;
}

/** What a report cut short proved: "2 properties fail, 15 hold, 4 are not known". */
function provenOf(r: AnalysisReport): string {
  const all = [...r.components.flatMap((c) => c.properties), r.layering, ...r.inclusions];
  const unknown = all.filter((p) => p.unknown === true).length;
  const failing = all.filter((p) => !p.holds && p.unknown !== true).length;
  if (r.components.length === 0) return "no property was checked (the description is valid)";
  const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  return (
    `${plural(failing, "property fails", "properties fail")}, ` +
    `${plural(all.length - failing - unknown, "holds", "hold")}, ` +
    `${plural(unknown, "is not known", "are not known")}`
  );
}

interface RouteQuery {
  readonly start: Start;
  readonly from: string;
  readonly to: number;
  /** The member whose network's headers enter (for a session, the member whose send row makes them). */
  readonly member: number;
  readonly design: string;
  readonly header: ReadonlyMap<string, Pattern> | undefined;
}

function routeQuery(c: CompiledSpec, flags: AnalyzeFlags): RouteQuery {
  const e = resolveEndpoint(c, flags.from ?? "");
  const start: Start =
    e.kind === "link"
      ? { kind: "link", link: e.link }
      : e.kind === "self"
        ? { kind: "self", member: e.member }
        : { kind: "session", member: e.member, session: e.session };
  const design = e.network.spec.design;
  const to = memberNamed(c, flags.to ?? "");
  if (e.kind === "session" && flags.header !== undefined)
    throw new UsageError(
      `--header: a session's packet (${e.text}) is payload, with no ${design.name} header of its own to match ` +
        `(give --from as NETWORK:MEMBER)`,
    );
  const member = e.kind === "link" ? (c.links[e.link]?.sender ?? -1) : e.member;
  const link = e.kind === "link" ? c.links[e.link] : undefined;
  const entering = member >= 0 ? member : (link?.receivers[0]?.member ?? 0);
  return {
    start,
    from: e.text,
    to,
    member: entering,
    design: design.name,
    header: flags.header === undefined ? undefined : headerPatterns(flags.header, design),
  };
}

function memberNamed(c: CompiledSpec, text: string): number {
  const single = c.networks.length === 1 ? c.networks[0]?.name : undefined;
  const q = text.includes(":") ? text.replace(":", ".") : text.includes(".") ? text : `${single ?? ""}.${text}`;
  const m = c.members.find((x) => x.qualified === q);
  if (m === undefined)
    throw new UsageError(
      `--to: there is no member '${excerpt(text)}' (write NETWORK:MEMBER; ` +
        `members: ${c.members.map((x) => x.qualified.replace(".", ":")).join(", ")})`,
    );
  return m.index;
}

/** `--header 'dst=10.0.2.0/24 proto=17'`: patterns written as a row's match writes them. */
function headerPatterns(
  text: string,
  design: CompiledSpec["networks"][number]["spec"]["design"],
): Map<string, Pattern> {
  const out = new Map<string, Pattern>();
  for (const part of text.split(/[\s,]+/).filter((p) => p !== "")) {
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    const field = design.fields.find((f) => f.name === name);
    if (eq < 0 || field === undefined) {
      throw new UsageError(
        `--header: '${excerpt(part)}' is not FIELD=PATTERN ` +
          `of ${design.name} (fields: ${design.fields.map((f) => f.name).join(", ")})`,
      );
    }
    const p = parsePattern(part.slice(eq + 1), field);
    if (!p.ok) throw new UsageError(`--header: ${name}: ${p.problem}${p.fix === "" ? "" : ` (${p.fix})`}`);
    if (p.value !== undefined) out.set(name, p.value);
  }
  return out;
}

// ── Text ────────────────────────────────────────────────────────────────────

function formatProperty(p: PropertyResult): string {
  const verdict = p.unknown === true ? "unknown" : p.holds ? "holds" : "FAILS";
  const head = `  ${verdict} ${p.name}${p.note === undefined ? "" : ` (${p.note})`}\n`;
  const lines = p.counterexamples.map((c) => `        ${c}\n`).join("");
  return `${head}${lines}${p.more > 0 ? `        (+${p.more} more)\n` : ""}`;
}

/** The report as text; `cut`, the last line of one its budget stopped (instead of the verdict); `made`, the classes
 * made when building them stopped (classesMade). */
export function formatReport(r: AnalysisReport, cut?: string, made?: ReturnType<typeof classesMade>): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;
  const classes = Object.entries(r.classes)
    .map(([d, n]) => `${d} ${n}`)
    .join(", ");
  if (r.components.length === 0 && !r.complete) {
    const note = made === undefined || made.note === "" ? "" : ` (${made.note})`;
    const head = `${r.file}: header classes: ${made?.made ?? classes} made before the analysis stopped${note}`;
    return `${head}\n${cut ?? ""}\n`;
  }
  const out = [`${r.file}: header classes: ${classes}\n`];
  for (const c of r.components) {
    const kind = c.kind === "network" ? "network" : c.kind === "bridged" ? "bridged set" : "subduction";
    const rel =
      c.kind === "network"
        ? "reachable"
        : c.kind === "bridged"
          ? "reachableWithBridging"
          : "reachabilityWithSubduction";
    out.push(
      `${kind} ${c.name} (${c.design}, ${count(c.members, "member")}): ${rel} ` +
        `${count(c.reachable.tuples, "tuple")}, ${c.reachable.pairs} of ${c.reachable.of} member pairs` +
        `${c.names < c.members ? ` (pairs of members, not names: ${c.members} members have ${c.names} names)` : ""}; ` +
        `traffic model ${count(c.effective.sessions, "session")}, ` +
        `${count(c.effective.deliveries, "delivery").replace("deliverys", "deliveries")}\n`,
    );
    for (const p of c.properties) out.push(formatProperty(p));
  }
  out.push("layering\n", formatProperty(r.layering));
  if (r.inclusions.length > 0) {
    out.push("inclusions (seed Figure 9)\n");
    for (const p of r.inclusions) out.push(formatProperty(p));
  }
  const all = [...r.components.flatMap((c) => c.properties), r.layering, ...r.inclusions];
  const failing = all.filter((p) => !p.holds).length;
  if (cut !== undefined) out.push(`${cut}\n`);
  else
    out.push(
      failing === 0 ? `every property holds (${all.length})\n` : `${failing} of ${all.length} properties fail\n`,
    );
  return out.join("");
}

function formatRoutes(x: RouteAnswer): string {
  const out: string[] = [];
  const delivered = x.reach.filter((r) => r.delivered).length;
  const classes = x.reach.length === 1 ? "1 header class gets" : `${x.reach.length} header classes get`;
  out.push(
    `from ${x.from} to ${x.to}: ` +
      `${x.reach.length === 0 ? "no header class gets there" : `${classes} there, ${delivered} delivered`}\n`,
  );
  for (const r of x.reach.slice(0, LISTED)) {
    out.push(
      `  ${r.start}: ${r.delivered ? "delivered" : "acquired"}` +
        `${r.approximate ? " (may: a header's class depends on its payload)" : ""}\n    ${r.path}\n`,
    );
    for (const then of r.after ?? []) out.push(`    then ${then.start}: ${then.end}\n`);
  }
  if (x.reach.length > LISTED) out.push(`  … and ${x.reach.length - LISTED} more (--json lists them all)\n`);
  if (x.miss.length > 0) {
    out.push(`${x.miss.length === 1 ? "1 header class does" : `${x.miss.length} header classes do`} not get there:\n`);
    for (const r of x.miss.slice(0, LISTED)) out.push(`  ${r.start}: ${r.end ?? ""}\n    ${r.path}\n`);
    if (x.miss.length > LISTED) out.push(`  … and ${x.miss.length - LISTED} more (--json lists them all)\n`);
  }
  if (!x.complete)
    out.push(
      `the search stopped after ${x.steps.toLocaleString("en-US")} steps (--max-steps), with paths left to walk: ` +
        "the classes above are those it found. Narrow it with --header or a lower --hop-limit, or raise --max-steps\n",
    );
  return out.join("");
}

function formatFindings(title: string, none: string, found: readonly Finding[], line: (f: Finding) => string): string {
  if (found.length === 0) return `${title}: none (${none})\n`;
  const out = [`${title}: ${found.length}\n`];
  for (const f of found.slice(0, LISTED)) out.push(`  ${line(f)}\n    ${f.path}\n`);
  if (found.length > LISTED) out.push(`  … and ${found.length - LISTED} more (--json lists them all)\n`);
  return out.join("");
}

function formatEquivalence(a: string, b: string, eq: Equivalence): string {
  if (eq.holds) return `${a} and ${b} are equivalent: the same reachable and effectivelyReachable relations\n`;
  const lines = [...eq.reachable, ...eq.effective].map((l) => `  ${l}\n`).join("");
  return `${a} and ${b} are not equivalent:\n${lines}${eq.more > 0 ? `  (+${eq.more} more)\n` : ""}`;
}
