// Random cases for the differential tests: a description, packets and where
// they enter. A case is generated as a *recipe* of small numbers, independent of
// each other, and resolved into YAML and bytes by plain functions: picks index
// into lists modulo their length, so every recipe is valid and fast-check can
// shrink any part of it alone.
//
// Field values come from small pools that hold the members' own names, so
// table rows and packets meet often enough for rows to hit — and miss.
// Composed descriptions (./composed.ts) add planned rows to the random tables
// (memberTables' Extra); a packet injected into a network that carries
// overlays is often stacked: the overlay's packet inside a header that one of
// the network's receive rows pops.

import fc from "fast-check";
import { compile } from "../../../src/control/compile.js";
import type { CompiledSpec } from "../../../src/control/compiled.js";
import type { Injection } from "../../../src/control/install.js";
import { InputError } from "../../../src/errors.js";
import { parseSpec } from "../../../src/description/load.js";
import { formatValue } from "../../../src/description/notation.js";
import type { DesignDef, FieldDef } from "../../../src/wire/designs.js";
import { designNamed } from "../../../src/wire/designs.js";
import { TPID_CUSTOMER, TPID_SERVICE } from "../../../src/model/headers.js";
import type { RefInput } from "../../../src/model/interpreter.js";
import { concat } from "../../pcap/builders.js";
import { cnaPacket, ethernetFrame, ipv4Packet, ipv6Packet } from "./packets.js";
import { TEST_MS } from "../../helpers/wait.js";

/** Compiles a description, or undefined when the loader or compiler refuses it (a skipped case). */
export function compileText(text: string): CompiledSpec | undefined {
  try {
    return compile(parseSpec(text, "random.yaml"));
  } catch (err) {
    if (err instanceof InputError) return undefined;
    throw err;
  }
}

/**
 * The time, in ms, one random case of specRecipe may take before its property is taken for hung: loaded, compiled, run
 * through an engine and the reference — four times what one took beside two busy processes at load 15 on 2 cores
 * (146 ms; issue 29), so that a property's limit follows its number of cases. A limit that catches a hang, not a
 * budget.
 */
export const CASE_MS = 600;

/** vitest's limit for a property of `cases` cases of `perCase` ms each (never under the suite's own, TEST_MS). */
export const timeFor = (cases: number, perCase = CASE_MS): number => Math.max(TEST_MS, cases * perCase);

// ── Recipes ────────────────────────────────────────────────────────────────

export const nat = (max: number): fc.Arbitrary<number> => fc.nat({ max });

const patternRecipe = fc.record({ field: nat(15), kind: nat(9), a: nat(63), b: nat(63), len: nat(128) });
const rowRecipe = fc.record({
  in: fc.option(nat(7), { freq: 2 }),
  patterns: fc.array(patternRecipe, { maxLength: 2 }),
  action: nat(15),
  outs: fc.array(nat(7), { minLength: 1, maxLength: 3 }),
});
/** A member's tables, of up to `rows` rows each. */
export function tablesRecipe(rows: number) {
  // "max": fast-check would otherwise keep arrays short whatever maxLength says.
  const tableRecipe = fc.record({
    kind: nat(7),
    shape: nat(7),
    field: nat(15),
    rows: fc.array(rowRecipe, { maxLength: rows, size: "max" }),
  });
  const sendRecipe = fc.record({
    session: nat(5),
    header: fc.array(fc.record({ field: nat(15), a: nat(63) }), { maxLength: 3 }),
  });
  return fc.record({
    acquire: fc.option(tableRecipe, { freq: 6 }),
    forward: fc.option(tableRecipe, { freq: 6 }),
    receive: fc.option(tableRecipe, { freq: 3 }),
    // Mostly no transmit table (every out-link physical); sometimes one that leaves some out-links out.
    transmit: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.array(fc.boolean(), { maxLength: 6 }) },
    ),
    send: fc.array(sendRecipe, { maxLength: 3 }),
  });
}

/** Recipes for descriptions with tables of up to `rows` rows each. */
export function specRecipeOf(rows: number) {
  const memberRecipe = tablesRecipe(rows);
  const linkRecipe = fc.record({
    mode: nat(7),
    a: nat(7),
    b: nat(7),
    others: fc.array(nat(7), { maxLength: 3 }),
    back: fc.boolean(),
    capture: fc.nat({ max: 9 }).map((n) => n > 0),
  });
  const networkRecipe = fc.record({
    design: nat(5),
    identBase: nat(5),
    members: fc.integer({ min: 2, max: 6 }),
    links: fc.array(linkRecipe, { minLength: 1, maxLength: 6 }),
    tables: fc.array(memberRecipe, { minLength: 6, maxLength: 6 }),
  });
  return fc.array(networkRecipe, { minLength: 1, maxLength: 2 });
}
export const specRecipe = specRecipeOf(5);
/** Tables of up to 60 rows: the data plane's hashing and tuple-space groups fill up. */
export const bigSpecRecipe = specRecipeOf(60);
export type SpecRecipe = typeof specRecipe extends fc.Arbitrary<infer T> ? T : never;

const packetRecipe = fc.record({
  endpoint: fc.record({ kind: nat(9), pick: nat(63), session: nat(7) }),
  picks: fc.array(nat(63), { minLength: 10, maxLength: 10 }),
  shape: nat(63),
  payload: nat(48),
  damage: nat(19),
  cut: nat(63),
  // The original length: as captured mostly; longer (a cut capture), rarely past what a 16-bit length field holds.
  origExtra: fc.oneof(
    { weight: 16, arbitrary: fc.constant(0) },
    { weight: 4, arbitrary: nat(2000) },
    { weight: 1, arbitrary: fc.integer({ min: 65400, max: 70000 }) },
  ),
  tsSec: fc.integer({ min: 0, max: 2_000_000_000 }),
  tsNsec: fc.integer({ min: 0, max: 999_999_999 }),
});
export const packetsRecipe = (minLength = 1, maxLength = 8): fc.Arbitrary<PacketRecipe[]> =>
  fc.array(packetRecipe, { minLength, maxLength });
export type PacketRecipe = typeof packetRecipe extends fc.Arbitrary<infer T> ? T : never;

// ── Designs, names and value pools ─────────────────────────────────────────

const LINK_SHAPES = [
  "one-way",
  "one-way",
  "two-way",
  "two-way",
  "allcast",
  "allcast",
  "from-outside",
  "to-outside",
] as const;

export const DESIGN_CHOICES: readonly { readonly header: string; readonly ttl?: "decrement" }[] = [
  { header: "ethernet" },
  { header: "ipv4" },
  { header: "ipv4", ttl: "decrement" },
  { header: "ipv6" },
  { header: "ipv6", ttl: "decrement" },
  { header: "cna" },
];

export function design(name: string): DesignDef {
  const d = designNamed(name);
  if (d === undefined) throw new Error(`no design ${name}`);
  return d;
}

/** Member i's name (address) in a design. */
export function memberName(d: DesignDef, i: number): bigint {
  switch (d.name) {
    case "ethernet":
      return 0x020000000001n + BigInt(i);
    case "ipv4":
      return 0x0a000001n + BigInt(i);
    case "ipv6":
      return 0x20010db8000000000000000000000001n + BigInt(i);
    default:
      return BigInt(100 + i);
  }
}

/** The members' names and `extra` addresses no member has: more distinct values, for big tables (the same `extra` for
 * rows and packets). */
function withExtra(d: DesignDef, names: readonly bigint[], extra: number): readonly bigint[] {
  return [...names, ...Array.from({ length: extra }, (_, i) => memberName(d, 50 + i))];
}

/** Values a field takes in rows and packets: the members' names for address fields, a few usual ones otherwise. */
export function pool(d: DesignDef, field: string, members: readonly bigint[]): readonly bigint[] {
  if (field === d.dstField || field === d.srcField) {
    const others: Record<string, bigint[]> = {
      ethernet: [0xffffffffffffn, 0x020000000099n],
      ipv4: [0xffffffffn, 0xc0a80101n, 0x0a000100n],
      ipv6: [0xff020000000000000000000000000001n, 0xfe800000000000000000000000000001n],
      cna: [0n, 0xffffffffn],
    };
    return [...members, ...members, ...(others[d.name] ?? [])];
  }
  const POOLS: Record<string, readonly number[]> = {
    type: [0x0800, 0x86dd, 0x0806, 0x88cc],
    vid: [0, 1, 10, 100, 4095],
    pcp: [0, 1, 3, 7],
    ivid: [0, 0, 7, 100],
    proto: [6, 17, 1, 132, 136, 47],
    ttl: [0, 1, 2, 3, 64, 255],
    hlim: [0, 1, 2, 3, 64, 255],
    dscp: [0, 10, 46, 63],
    sport: [0, 53, 80, 443, 8080, 65535],
    dport: [0, 53, 80, 443, 8080, 65535],
    next: [6, 17, 58, 59],
    flow: [0, 1, 0x12345, 0xfffff],
    session: [0, 1, 2, 7],
    overlay: [0, 1, 0x800, 0xffff],
  };
  return (POOLS[field] ?? [0, 1]).map(BigInt);
}

export const at = <T>(list: readonly T[], i: number): T => {
  const v = list[i % list.length];
  if (v === undefined) throw new Error("pick from an empty list");
  return v;
};
const ones = (bits: number): bigint => (1n << BigInt(bits)) - 1n;
const prefixMask = (bits: number, len: number): bigint => ones(bits) ^ ones(bits - len);

// ── Descriptions ───────────────────────────────────────────────────────────

export interface Ports {
  readonly ins: number[];
  readonly outs: number[];
}

export type Yaml = Record<string, unknown>;

/**
 * The text of a description, as JSON (which is YAML): the yaml library's writer took a quarter of a random case's
 * CPU; the quick reader is held to that writer's output on random data in test/description/quick-source.test.ts.
 */
export function specText(recipe: SpecRecipe, extra = 0): string {
  const networks: Yaml = {};
  recipe.forEach((n, k) => {
    const choice = at(DESIGN_CHOICES, n.design);
    const d = design(choice.header);
    const keys = Array.from({ length: n.members }, (_, i) => `m${i}`);
    const names = keys.map((_, i) => memberName(d, i));
    const ports = new Map(keys.map((key) => [key, { ins: [], outs: [] } as Ports]));
    // Link identifiers from a base: small ones usually, 0, and ones near the largest allowed.
    const next = new Map(keys.map((key) => [key, at([1, 1, 0, 7, 300, 0xffe0], n.identBase)]));
    const ident = (key: string): number => {
      const i = next.get(key) ?? 1;
      next.set(key, i + 1);
      return i;
    };
    const port = (key: string): Ports => ports.get(key) ?? { ins: [], outs: [] };
    const links: Yaml[] = [];
    n.links.forEach((l, li) => {
      const a = at(keys, l.a);
      const bRaw = at(keys, l.b);
      const b = bRaw === a ? at(keys, l.b + 1) : bRaw;
      const capture = l.capture ? {} : { record: false };
      const mode = at(LINK_SHAPES, l.mode);
      if (mode === "one-way" || mode === "two-way") {
        const two = mode === "two-way";
        const [ia, ib] = [ident(a), ident(b)];
        port(a).outs.push(ia);
        port(b).ins.push(ib);
        if (two) {
          port(a).ins.push(ia);
          port(b).outs.push(ib);
        }
        links.push({ from: `${a}.${ia}`, to: `${b}.${ib}`, ...(two ? { mode: "two-way" } : {}), ...capture });
      } else if (mode === "allcast") {
        // An allcast group (seed §4.3): one identifier per member for all the group's links.
        const group = `g${li}`;
        const members = [...new Set([a, b, ...l.others.map((o) => at(keys, o))])];
        const ids = new Map(members.map((m) => [m, ident(m)]));
        const id = (m: string): number => ids.get(m) ?? 0;
        const senders = l.back ? [a, b] : [a];
        for (const s of senders) {
          const to = members.filter((m) => m !== s);
          port(s).outs.push(id(s));
          for (const r of to) port(r).ins.push(id(r));
          links.push({
            from: `${s}.${id(s)}`,
            to: to.map((r) => `${r}.${id(r)}`),
            mode: "allcast",
            group,
            name: `${group}-${s}`,
            ...capture,
          });
        }
      } else if (mode === "from-outside") {
        // From outside to one member, or (allcast) to several.
        const to = l.back ? [...new Set([b, ...l.others.map((o) => at(keys, o))])] : [b];
        const ids = to.map((r) => {
          const i = ident(r);
          port(r).ins.push(i);
          return `${r}.${i}`;
        });
        links.push({
          external: `x${li}`,
          to: l.back ? ids : ids[0],
          ...(l.back ? { mode: "allcast", group: `g${li}` } : {}),
          ...capture,
        });
      } else {
        const ia = ident(a);
        const two = l.back;
        port(a).outs.push(ia);
        if (two) port(a).ins.push(ia);
        links.push({ from: `${a}.${ia}`, external: `x${li}`, ...(two ? { mode: "two-way" } : {}), ...capture });
      }
    });
    const tables: Yaml = {};
    keys.forEach((key, i) => {
      const t = memberTables(d, withExtra(d, names, extra), port(key), at(n.tables, i));
      if (Object.keys(t).length > 0) tables[key] = t;
    });
    networks[`n${k}`] = {
      header: choice.header,
      ...(choice.ttl !== undefined ? { ttl: choice.ttl } : {}),
      members: Object.fromEntries(keys.map((key, i) => [key, { name: formatValue(names[i] ?? 0n, d.nameKind) }])),
      links,
      tables,
    };
  });
  return JSON.stringify({ networks }, null, 1);
}

export type MemberRecipe = SpecRecipe[number]["tables"][number];
type TableRecipe = NonNullable<MemberRecipe["acquire"]>;
type RowRecipe = TableRecipe["rows"][number];
type PatternRecipe = RowRecipe["patterns"][number];

/** A row a composed description needs (./composed.ts); its patterns are exact values. */
export interface PlannedRow {
  readonly in?: number | "self" | "shared";
  readonly match: ReadonlyMap<string, bigint>;
  readonly action: Yaml;
}

/** What a composed description adds to a member's random tables. */
export interface Extra {
  /** Rows the case's plan needs, by table; random rows go around them (mostly after). */
  readonly acquire?: readonly PlannedRow[];
  readonly forward?: readonly PlannedRow[];
  readonly receive?: readonly PlannedRow[];
  /** Transmit rows by out-link (`via: { session: … }`); the member's other out-links get `via: physical`. */
  readonly transmit?: ReadonlyMap<number, Yaml>;
  readonly send?: readonly Yaml[];
  /** The underlay's shared member: the shared links it receives on (random `do: shared` rows take them) … */
  readonly sharedIns?: readonly number[];
  /** … and sends on (random `in: shared` rows go out on them). */
  readonly sharedOuts?: readonly number[];
  /** The overlay's shared member: random forward rows may say `out: shared`. */
  readonly overlayShared?: boolean;
  /** ExternalLink targets random receive rows may name ("network.ident"). */
  readonly externalLinks?: readonly string[];
}

export function memberTables(
  d: DesignDef,
  names: readonly bigint[],
  ports: Ports,
  r: MemberRecipe,
  extra: Extra = {},
): Yaml {
  const t: Yaml = {};
  const outs = [...new Set(ports.outs)];
  const sharedOuts = extra.sharedOuts ?? [];
  const table = (
    tr: TableRecipe | null,
    role: "acquire" | "forward" | "receive",
    planned: readonly PlannedRow[],
    action: (rr: RowRecipe, inLink: unknown) => Yaml,
  ): unknown => {
    if (tr === null && planned.length === 0) return undefined;
    const inLinks: (number | "self" | "shared")[] = [
      ...ports.ins,
      "self",
      ...(role === "forward" && sharedOuts.length > 0 ? ["shared" as const] : []),
    ];
    const seen = new Set<string>();
    const key = (inLink: unknown, canon: readonly string[]): string =>
      JSON.stringify([inLink ?? "", canon.filter((c) => c !== "").sort()]);
    const plan: Yaml[] = [];
    for (const p of planned) {
      const same = key(
        p.in,
        [...p.match].map(([name, v]) => `${name}=${v}&${ones(fieldOf(d, name).bits)}`),
      );
      if (seen.has(same)) continue;
      seen.add(same);
      const match = Object.fromEntries(
        [...p.match].map(([name, v]) => [name, valueText(fieldOf(d, name), v, Number(v % 3n))]),
      );
      plan.push({ ...(p.in === undefined ? {} : { in: p.in }), match, ...p.action });
    }
    const before: Yaml[] = [];
    const after: Yaml[] = [];
    // The table's shape: free rows (most often), or rows an LPM or exact table holds, so those kinds run often too.
    const shape = tr === null ? "free" : tr.shape < 5 ? "free" : tr.shape < 7 ? "lpm" : "exact";
    const first = tr?.rows[0];
    for (const rr of tr?.rows ?? []) {
      const patterns: PatternRecipe[] =
        shape === "free"
          ? rr.patterns
          : shape === "lpm"
            ? [
                rr.patterns[0] === undefined
                  ? { field: tr?.field ?? 0, kind: 9, a: 0, b: 0, len: 0 }
                  : { ...rr.patterns[0], field: tr?.field ?? 0, kind: 4 },
              ]
            : (first?.patterns ?? []).map((p, k) => ({ ...p, ...(rr.patterns[k] ?? {}), field: p.field, kind: 0 }));
      const inPick = role === "receive" ? null : shape === "free" ? rr.in : first?.in === null ? null : (rr.in ?? 0);
      const inLink = inPick === null ? undefined : at(inLinks, inPick);
      const match: Yaml = {};
      const canon = new Map<string, string>(); // by field: a later pattern on a field replaces an earlier one
      for (const p of patterns) {
        const f = at(d.fields, p.field);
        const { text, same } = pattern(f, pool(d, f.name, names), p);
        match[f.name] = text;
        canon.set(f.name, same);
      }
      // Rows that match the same keys are refused by design: keep the first.
      const same = key(inLink, [...canon.values()]);
      if (seen.has(same)) continue;
      seen.add(same);
      // Around planned rows, a random row mostly comes after them: before, it may hide them.
      (planned.length > 0 && rr.action < 12 ? after : before).push({
        ...(inLink === undefined ? {} : { in: inLink }),
        match,
        ...action(rr, inLink),
      });
    }
    let rows = [...before, ...plan, ...after];
    if (role === "forward" && sharedOuts.length > 0) {
      // The underlay's shared member names every row's in-link (handed-over packets match only `in: shared` rows):
      // a row for any in-link stands for one row per in-link, in place.
      const written = new Set<string>();
      rows = rows
        .flatMap((y) =>
          y["in"] === undefined ? inLinks.filter((i) => i !== "shared").map((i) => ({ ...y, in: i })) : [y],
        )
        .filter((y) => {
          const k = JSON.stringify([y["in"], y["match"]]);
          if (written.has(k)) return false;
          written.add(k);
          return true;
        });
    }
    const texts = rows.flatMap((y) => Object.values((y["match"] ?? {}) as Yaml).map(String));
    const plain = texts.every((v) => !/\/|&&&|\.\./.test(v)); // exact values and wildcards only
    // Mostly the kind the compiler infers; sometimes a more general one it accepts, so every table implementation runs.
    const kind =
      tr === null || tr.kind < 6
        ? undefined
        : tr.kind === 7 || texts.some((v) => v.includes(".."))
          ? "range"
          : plain
            ? "optional"
            : "ternary";
    return kind === undefined ? rows : { kind, rows };
  };
  const acquire = table(r.acquire, "acquire", extra.acquire ?? [], (rr, inLink) => {
    // do: shared (SharedAcquire) only on a row for a shared link the member receives on.
    if (typeof inLink === "number" && extra.sharedIns?.includes(inLink) === true && rr.action % 5 === 0)
      return { do: "shared" };
    return { do: at(["forward", "forward", "receive", "both"], rr.action) };
  });
  const forward = table(r.forward, "forward", extra.forward ?? [], (rr, inLink) => {
    if (extra.overlayShared === true && rr.action % 8 === 7) return { out: "shared" };
    // What the overlay hands over (in: shared) may only leave on a shared link.
    const choices = inLink === "shared" ? sharedOuts : outs;
    const picked = [...new Set(rr.outs.map((o) => (choices.length === 0 ? -1 : at(choices, o))))].filter((o) => o >= 0);
    return {
      out:
        rr.action % 8 === 0 || picked.length === 0
          ? "drop"
          : picked.length === 1 && rr.action % 2 === 0
            ? picked[0]
            : picked,
    };
  });
  const links = extra.externalLinks ?? [];
  const receive = table(r.receive, "receive", extra.receive ?? [], (rr) =>
    links.length > 0 && rr.action % 2 === 1 ? { do: { link: at(links, rr.action >> 1) } } : { do: "deliver" },
  );
  if (acquire !== undefined) t["acquire"] = acquire;
  if (forward !== undefined) t["forward"] = forward;
  if (receive !== undefined) t["receive"] = receive;
  if (r.transmit !== undefined || extra.transmit !== undefined) {
    t["transmit"] = outs
      .filter((_, i) => r.transmit?.[i] !== false)
      .map((o) => extra.transmit?.get(o) ?? { out: o, via: "physical" });
  }
  const sessions = new Set<number>((extra.send ?? []).map((y) => Number(y["session"])));
  const send: Yaml[] = [...(extra.send ?? [])];
  const writable = d.fields.filter((f) => f.readOnly !== true);
  for (const s of r.send) {
    const session = at(SESSIONS, s.session);
    if (sessions.has(session)) continue;
    sessions.add(session);
    const header: Yaml = {};
    for (const h of s.header) {
      const f = at(writable, h.field);
      header[f.name] = valueText(f, at(pool(d, f.name, names), h.a), h.a);
    }
    send.push({ session, header });
  }
  if (send.length > 0) t["send"] = send;
  return t;
}

function fieldOf(d: DesignDef, name: string): FieldDef {
  const f = d.fields.find((x) => x.name === name);
  if (f === undefined) throw new Error(`${d.name} has no field ${name}`);
  return f;
}

/** Session identifiers rows use; packets also try others, which miss. */
export const SESSIONS: readonly number[] = [1, 2, 3, 7, 1000, 4294967295];
const UNUSED_SESSIONS: readonly number[] = [0, 5, 999, 65536];

/** A value in the field's notation, or as a plain integer (YAML number or hex text), which every field accepts. */
export function valueText(f: FieldDef, v: bigint, style: number): string | number {
  if (style % 3 === 1 && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  if (style % 3 === 2) return `0x${v.toString(16)}`;
  return formatValue(v, f.kind);
}

/** A pattern's text, and what it matches in one canonical form ("" for everything) to tell rows that match alike. */
function pattern(f: FieldDef, values: readonly bigint[], p: PatternRecipe): { text: string | number; same: string } {
  const v = at(values, p.a);
  const w = at(values, p.b);
  const all = ones(f.bits);
  const text = (x: bigint): string => String(valueText(f, x, p.a + p.b));
  const masked = (value: bigint, mask: bigint): string => (mask === 0n ? "" : `${f.name}=${value & mask}&${mask}`);
  switch (p.kind) {
    case 0:
    case 1:
    case 2:
    case 3:
      return { text: valueText(f, v, p.b), same: masked(v, all) };
    case 4:
    case 5: {
      const len = p.len % (f.bits + 1);
      const mask = prefixMask(f.bits, len);
      return { text: `${text(v & mask)}/${len}`, same: masked(v, mask) };
    }
    case 6:
    case 7: {
      const mask = at([all, prefixMask(f.bits, Math.ceil(f.bits / 2)), 0xffn & all, v ^ w, w], p.len);
      return { text: `${text(v & mask)} &&& ${text(mask)}`, same: masked(v, mask) };
    }
    case 8: {
      const [lo, hi] = v <= w ? [v, w] : [w, v];
      return {
        text: `${text(lo)}..${text(hi)}`,
        same: lo === hi ? masked(lo, all) : lo === 0n && hi === all ? "" : `${f.name}=${lo}..${hi}`,
      };
    }
    default:
      return { text: "*", same: "" };
  }
}

// ── Packets ────────────────────────────────────────────────────────────────

export interface ResolvedPackets {
  readonly injections: Injection[];
  readonly inputs: RefInput[];
}

/** Endpoints and bytes for the recipes, against a compiled description. */
export function resolvePackets(compiled: CompiledSpec, recipes: readonly PacketRecipe[], extra = 0): ResolvedPackets {
  const injections: Injection[] = [];
  const endpoint = (inj: Injection): number => {
    const i = injections.findIndex(
      (j) => j.kind === inj.kind && j.member === inj.member && j.session === inj.session && j.link === inj.link,
    );
    return i >= 0 ? i : injections.push(inj) - 1;
  };
  const inputs = recipes.map((r): RefInput => {
    const kind = r.endpoint.kind < 5 ? "link" : r.endpoint.kind < 8 ? "self" : "session";
    let inj: Injection;
    let network: number;
    if (kind === "link" && compiled.links.length > 0) {
      const l = at(compiled.links, r.endpoint.pick);
      inj = { kind: "link", member: l.sender, session: 0, link: l.index };
      network = l.network;
    } else {
      const m = at(compiled.members, r.endpoint.pick);
      const sessions = (m.tables.send?.spec?.rows ?? []).flatMap((row) =>
        row.session === undefined ? [] : [row.session],
      );
      const session =
        r.endpoint.session < 6 && sessions.length > 0
          ? at(sessions, r.endpoint.session)
          : at(UNUSED_SESSIONS, r.endpoint.session);
      inj =
        kind === "session"
          ? { kind, member: m.index, session, link: -1 }
          : { kind: "self", member: m.index, session: 0, link: -1 };
      network = m.network;
    }
    const net = compiled.networks[network];
    if (net === undefined) throw new Error("no network");
    const names = withExtra(net.spec.design, namesAround(compiled, network), extra);
    // A session's packet is payload: the send table attaches the header.
    const receiver = inj.kind === "link" ? compiled.links[inj.link]?.receivers[0]?.member : undefined;
    const bytes =
      inj.kind === "session"
        ? payload(r)
        : damaged(
            net.spec.design,
            names,
            r,
            () => stacked(compiled, network, receiver, r) ?? packet(net.spec.design, names, r),
          );
    return { bytes, origLen: bytes.length + r.origExtra, tsSec: r.tsSec, tsNsec: r.tsNsec, endpoint: endpoint(inj) };
  });
  return { injections, inputs };
}

function payload(r: PacketRecipe): Uint8Array {
  return Uint8Array.from({ length: r.payload }, (_, i) => (r.picks[i % r.picks.length] ?? 0) * 7 + i);
}

/** A valid packet of the design, then (one time in four) broken. */
/**
 * The names of a network's members and of the members of networks joined to
 * it: bridged with it (seed §5.1: one name space) or sharing a link with it
 * (subduction, seed §5.3: packets carry both networks' names).
 */
function namesAround(c: CompiledSpec, network: number): bigint[] {
  const nets = new Set([network]);
  const joins = [
    // A link between members of two networks is a bridging link.
    ...c.links.map((l) =>
      [l.sender, ...l.receivers.map((x) => x.member)].flatMap((m) => (m < 0 ? [] : [c.members[m]?.network ?? -1])),
    ),
    ...c.sharedOutLinks.map((p) => [c.members[p.member]?.network ?? -1, c.links[p.link]?.network ?? -1]),
  ];
  for (let grew = true; grew;) {
    grew = false;
    for (const ends of joins) {
      if (ends.some((n) => nets.has(n)) && ends.some((n) => !nets.has(n))) {
        for (const n of ends) nets.add(n);
        grew = true;
      }
    }
  }
  return c.members.filter((m) => nets.has(m.network)).map((m) => m.spec.nameValue);
}

/**
 * Layering: a packet of this network that carries one of an overlay inside,
 * addressed so that a receive row `do: { link: … }` of the network pops it —
 * at the member `aim` when it has such a row — or undefined when no row pops
 * into an overlay (or, one time in two, not to stack).
 */
function stacked(
  c: CompiledSpec,
  network: number,
  aim: number | undefined,
  r: PacketRecipe,
  depth = 0,
): Uint8Array | undefined {
  if ((r.shape >> (3 + depth)) % 2 === 1 || depth > 3) return undefined;
  const pops = c.members
    .filter((m) => m.network === network)
    .flatMap((m) =>
      (m.tables.receive?.spec?.rows ?? []).flatMap((row) =>
        row.action.kind === "link" ? [{ m, row, into: row.action.network }] : [],
      ),
    );
  const aimed = pops.filter((p) => p.m.index === aim);
  const choices = aimed.length > 0 ? aimed : pops;
  if (choices.length === 0) return undefined;
  const pick = at(choices, r.picks[8] ?? 0);
  const net = c.networks[network];
  const overlay = c.networks.find((n) => n.name === pick.into);
  if (net === undefined || overlay === undefined) return undefined;
  const d = net.spec.design;
  const turned = { ...r, picks: [...r.picks.slice(3), ...r.picks.slice(0, 3)] }; // other picks for the inner header
  const onMachine = c.members.find((m) => m.network === overlay.index && m.machine === pick.m.machine);
  const inner =
    stacked(c, overlay.index, onMachine?.index, turned, depth + 1) ??
    packet(overlay.spec.design, namesAround(c, overlay.index), turned);
  // The outer header: to the member that pops, with what its row matches.
  const fields = headerFields(d, namesAround(c, network), r);
  fields.set(d.dstField, pick.m.spec.nameValue);
  for (const [name, p] of pick.row.match) fields.set(name, p.kind === "range" ? p.lo : p.value);
  // Sometimes padding after the inner packet, as Ethernet pads a short frame: an IPv4 or IPv6 overlay trims it by its
  // stated length.
  const padding = new Uint8Array(r.cut % 4 === 0 ? 1 + (r.cut % 17) : 0).fill(0xa5);
  return frame(d, fields, r, concat(inner, padding));
}

function damaged(
  d: DesignDef,
  names: readonly bigint[],
  r: PacketRecipe,
  make: () => Uint8Array = () => packet(d, names, r),
): Uint8Array {
  const b = make();
  switch (r.damage) {
    case 0:
    case 1: // cut short
      return b.slice(0, r.cut % (b.length + 1));
    case 2: // another version number (IP), or a header one byte short
      if (d.name === "ipv4" || d.name === "ipv6") {
        const c = b.slice();
        c[0] = ((r.cut % 16) << 4) | ((c[0] ?? 0) & 0xf);
        return c;
      }
      return b.slice(0, d.name === "cna" ? 15 : 13);
    case 3: {
      // IPv4: IHL or total length too small
      if (d.name !== "ipv4") return b;
      const c = b.slice();
      if (r.cut % 2 === 0) c[0] = 0x40 | (r.cut % 5);
      else c[3] = r.cut % 20;
      return c;
    }
    case 6: {
      // a wrong IPv4 checksum: not checked when parsing, and forwarding must keep it wrong
      if (d.name !== "ipv4") return b;
      const c = b.slice();
      c[10] = (c[10] ?? 0) ^ (1 + (r.cut % 255));
      return c;
    }
    case 4: // noise
      return Uint8Array.from({ length: r.cut }, (_, i) => ((r.picks[i % 10] ?? 0) * 37 + i * 11) & 0xff);
    case 5: // a packet of another design
      return packet(at(["ethernet", "ipv4", "ipv6", "cna"].map(design), r.shape), names, r);
    default:
      return b;
  }
}

function packet(d: DesignDef, names: readonly bigint[], r: PacketRecipe, body = payload(r)): Uint8Array {
  return frame(d, headerFields(d, names, r), r, body);
}

/** A header's fields picked from the pools (picks 0–6). */
function headerFields(d: DesignDef, names: readonly bigint[], r: PacketRecipe): Map<string, bigint> {
  const pick = (field: string, i: number): bigint => at(pool(d, field, names), r.picks[i] ?? 0);
  const order: Record<string, readonly string[]> = {
    ethernet: ["dst", "src", "type", "vid", "ivid", "pcp"],
    ipv4: ["dst", "src", "proto", "ttl", "dscp", "sport", "dport"],
    ipv6: ["dst", "src", "next", "hlim", "flow"],
    cna: ["dst", "src", "session", "overlay"],
  };
  return new Map((order[d.name] ?? []).map((f, i) => [f, pick(f, i)]));
}

/** The design's header with these fields (the rest from the recipe's shape) in front of `body`, made by the test's own
 * packet factories. */
function frame(d: DesignDef, f: ReadonlyMap<string, bigint>, r: PacketRecipe, body: Uint8Array): Uint8Array {
  const v = (name: string): bigint => f.get(name) ?? 0n;
  switch (d.name) {
    case "ethernet": {
      const tpids = [TPID_CUSTOMER, TPID_SERVICE, TPID_CUSTOMER];
      // Up to three tags: a third is not parsed, its TPID is the type.
      const tags = Array.from({ length: at([0, 0, 1, 2, 3], r.shape) }, (_, i) => ({
        tpid: at(tpids, (r.shape >> 2) + i),
        pcp: Number(at(pool(d, "pcp", []), r.picks[5 + i] ?? 0)),
        dei: (r.picks[7] ?? 0) % 2,
        vid: Number(i === 0 ? v("vid") : v("ivid")),
      }));
      return ethernetFrame({ dst: v("dst"), src: v("src"), tags, type: Number(v("type")), payload: body });
    }
    case "ipv4":
      return ipv4Packet({
        src: v("src"),
        dst: v("dst"),
        proto: Number(v("proto")),
        ttl: Number(v("ttl")),
        dscp: Number(v("dscp")),
        ecn: r.shape % 4,
        options: Uint8Array.from({ length: 4 * ((r.shape >> 2) % 3) }, (_, i) => 1 + i * 29),
        fragOffset: (r.shape >> 4) % 3 === 2 ? 185 : 0,
        flags: (r.shape >> 4) % 3 === 1 ? 1 : 0,
        ports: [Number(v("sport")), Number(v("dport"))],
        payload: body,
      });
    case "ipv6":
      return ipv6Packet({
        src: v("src"),
        dst: v("dst"),
        next: Number(v("next")),
        hlim: Number(v("hlim")),
        flow: Number(v("flow")),
        tc: r.shape,
        payload: body,
      });
    default:
      return cnaPacket({ src: v("src"), dst: v("dst"), session: v("session"), overlay: v("overlay"), payload: body });
  }
}
