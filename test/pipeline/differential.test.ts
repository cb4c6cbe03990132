// The data plane against the reference interpreter (src/model/), which is the
// model's table semantics in plain TypeScript. Random descriptions go through
// the real loader, compiler and installer; random packets, mostly well-formed
// and made of the names the tables use, enter at random endpoints. The data
// plane is driven as `strata run` drives it, through an Engine
// (./helpers/engine-run.ts), and what it writes is compared: every recording
// (links/, delivered/: bytes, lengths, times, in order), the counters of
// summary.json (drops per member and reason, deliveries, link crossings, row
// hits), and, for the packets traced, the order of everything recorded and the
// packet numbers, from trace.jsonl.

import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import type { Injection } from "../../src/control/install.js";
import { InputError } from "../../src/errors.js";
import { openCapture } from "../../src/pcap/reader.js";
import { parseSpec } from "../../src/description/load.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";
import { interpret, type RefInput, type RefOptions, type RefResult } from "../../src/model/interpreter.js";
import {
  bigSpecRecipe,
  CASE_MS,
  compileText,
  packetsRecipe,
  resolvePackets,
  specRecipe,
  specText,
  timeFor,
} from "./helpers/cases.js";
import { composedRecipe, composedText } from "./helpers/composed.js";
import { dropsByMember, type EngineRunOptions, rowHits, runEngine } from "./helpers/engine-run.js";
import { cnaPacket, ethernetFrame, hex, ipv4Packet } from "./helpers/packets.js";
import { deliveredFile, linkFile, type Rec } from "./helpers/recorded.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

/** What both sides are compared on. */
interface Outcome {
  /** Each recording's records, by its file in --out. */
  readonly files: ReadonlyMap<string, readonly Rec[]>;
  /** By member index (−1: before any member), then by DROP_REASONS index. */
  readonly drops: ReadonlyMap<number, readonly number[]>;
  readonly delivered: readonly number[];
  readonly linkPackets: readonly number[];
  /** Per compiled row, by table id. */
  readonly hits: ReadonlyMap<number, readonly number[]>;
  /** For the packets traced (none without a trace): everything recorded, in order, "#packet file". */
  readonly order: readonly string[];
}

/** The reference's result as strata would write it: outputs into recordings, and the traced packets' in order. */
function referenceOutcome(c: CompiledSpec, r: RefResult, traced: ReadonlySet<number>): Outcome {
  const files = new Map<string, Rec[]>();
  const order: string[] = [];
  for (const o of r.outputs) {
    const file = o.kind === "link" ? linkFile(c, o.target) : deliveredFile(c, o.target);
    if (file === undefined) continue;
    const list = files.get(file) ?? [];
    list.push({ tsSec: o.tsSec, tsNsec: o.tsNsec, origLen: o.origLen, bytes: o.bytes });
    files.set(file, list);
    if (traced.has(o.packet)) order.push(`#${o.packet} ${file}`);
  }
  return { files, drops: r.drops, delivered: r.delivered, linkPackets: r.linkPackets, hits: r.hits, order };
}

/** A result in names people read, so a failing comparison shows where the two sides part. */
function view(c: CompiledSpec, r: Outcome): Record<string, unknown> {
  const member = (i: number): string => c.members[i]?.qualified ?? "(outside)";
  const link = (i: number): string => c.links[i]?.qualified ?? `link ${i}`;
  const drops: Record<string, Record<string, number>> = {};
  for (const [m, counts] of [...r.drops.entries()].sort((a, b) => a[0] - b[0])) {
    const nonzero = counts.flatMap((n, k) => (n > 0 ? [[DROP_REASONS[k] ?? `reason ${k}`, n] as const] : []));
    if (nonzero.length > 0) drops[member(m)] = Object.fromEntries(nonzero);
  }
  return {
    files: Object.fromEntries(
      [...r.files.entries()]
        .filter(([, records]) => records.length > 0)
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([file, records]) => [
          file,
          records.map((o) => `${o.tsSec}.${o.tsNsec} len ${o.bytes.length}/${o.origLen} ${hex(o.bytes)}`),
        ]),
    ),
    order: r.order,
    drops,
    delivered: Object.fromEntries(r.delivered.flatMap((n, i) => (n > 0 ? [[member(i), n]] : []))),
    linkPackets: Object.fromEntries(r.linkPackets.flatMap((n, i) => (n > 0 ? [[`${link(i)}[${i}]`, n]] : []))),
    hits: Object.fromEntries(
      c.tables.flatMap((t) =>
        (r.hits.get(t.id) ?? []).flatMap((n, row) =>
          n > 0 ? [[`${member(t.member)}.${t.role}[${row}] ${t.rows[row]?.text ?? ""}`, n]] : [],
        ),
      ),
    ),
  };
}

function describeCase(
  text: string,
  c: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  options: EngineRunOptions,
): string {
  const where = (inj: Injection | undefined): string =>
    inj === undefined
      ? "?"
      : inj.kind === "link"
        ? `link ${c.links[inj.link]?.qualified ?? inj.link}`
        : `${inj.kind} ${c.members[inj.member]?.qualified ?? inj.member}` +
          `${inj.kind === "session" ? ` @${inj.session}` : ""}`;
  const packets = inputs.map(
    (p, i) => `  #${i} at ${where(injections[p.endpoint])}, orig ${p.origLen}: ${hex(p.bytes)}`,
  );
  return `options ${JSON.stringify(options)}\npackets:\n${packets.join("\n")}\nspec:\n${text}`;
}

/** Runs both sides and throws if they differ; returns the reference's result, or undefined when the installer refused
 * the description (a skipped case). */
function agree(
  text: string,
  c: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  options: EngineRunOptions & RefOptions,
  first = 0,
): RefResult | undefined {
  let ran;
  try {
    ran = runEngine(c, injections, inputs, first, options);
  } catch (err) {
    if (err instanceof InputError) return undefined; // e.g. two rows the installer finds identical
    throw err;
  }
  const ref = interpret(c, injections, inputs, first, options);
  const traced = new Set(ran.trace.map((l) => l.packet));
  const recordedLinks = new Set(c.links.flatMap((l) => (l.recorded ? [l.qualified] : [])));
  const order = ran.trace.flatMap((l) =>
    l.steps.flatMap((s) =>
      s.step === "link" && recordedLinks.has(String(s["link"]))
        ? [`#${l.packet} links/${String(s["link"])}`]
        : s.step === "deliver"
          ? [`#${l.packet} delivered/${String(s["member"])}`]
          : [],
    ),
  );
  const engine: Outcome = {
    files: ran.recorded.files,
    drops: dropsByMember(ran),
    delivered: ran.counters.delivered,
    linkPackets: ran.counters.linkPackets,
    hits: rowHits(ran),
    order,
  };
  const differences = differ(view(c, engine), view(c, referenceOutcome(c, ref, traced)));
  if (differences !== "")
    throw new Error(
      `strata and the reference disagree\n${differences}\n${describeCase(text, c, injections, inputs, options)}`,
    );
  return ref;
}

/** Each part of the views that differs, both sides in full (a failure message must not elide what differs). */
function differ(strata: Record<string, unknown>, ref: Record<string, unknown>): string {
  const show = (v: unknown): string => JSON.stringify(v, null, 1).replace(/\n\s*/g, " ");
  return Object.keys(ref)
    .filter((k) => show(strata[k]) !== show(ref[k]))
    .map((k) => `${k}:\n  strata:    ${show(strata[k])}\n  reference: ${show(ref[k])}`)
    .join("\n");
}

/** Cases of the main property; to search longer: STRATA_DIFF_RUNS=50000 npx vitest run
 * test/pipeline/differential.test.ts */
const RUNS = Number(process.env["STRATA_DIFF_RUNS"] ?? 1200);

const limits = fc.record({
  hopLimit: fc.integer({ min: 0, max: 12 }),
  copyLimit: fc.integer({ min: 0, max: 40 }),
  batchPackets: fc.constantFrom(3, 256),
  // Small rings and buffers: runs pause and resume often.
  buffers: fc.record({
    slots: fc.constant(64),
    batchBytes: fc.constantFrom(64, 1 << 16), // 64: the runner must grow its input area
    slotLen: fc.constantFrom(1024, 4096),
    recordingBytes: fc.constantFrom(0, 1 << 16), // 0: the least ring, one record of the longest packet
    traceEvents: fc.constantFrom(1, 1 << 12),
  }),
  trace: fc.boolean(),
  traceMask: fc.option(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), { nil: undefined }), // --trace-packets
});

describe("strata run = reference interpreter", () => {
  it(
    "on random descriptions and packets",
    () => {
      let ran = 0;
      let skipped = 0;
      const reasons = new Set<string>();
      fc.assert(
        fc.property(specRecipe, packetsRecipe(), limits, fc.nat(1_000_000), (spec, packets, options, first) => {
          const text = specText(spec);
          const c = compileText(text);
          if (c === undefined) {
            skipped++;
            return;
          }
          const { injections, inputs } = resolvePackets(c, packets);
          const ref = agree(text, c, injections, inputs, options, first);
          if (ref === undefined) {
            skipped++;
            return;
          }
          ran++;
          for (const counts of ref.drops.values())
            counts.forEach((n, k) => n > 0 && reasons.add(DROP_REASONS[k] ?? ""));
        }),
        { numRuns: RUNS },
      );
      // The cases must mostly run, and reach every kind of drop the model has.
      expect(skipped).toBeLessThan(ran / 5);
      expect([...reasons].sort()).toEqual(
        [
          "acquire-miss",
          "bad-header",
          "forward-drop",
          "forward-miss",
          "loop",
          "receive-miss",
          "replication-limit",
          "send-miss",
          "too-long",
          "transmit-miss",
          "ttl-expired",
        ].sort(),
      );
    },
    timeFor(RUNS),
  );

  it(
    "with tables of up to 60 rows over many distinct addresses",
    () => {
      fc.assert(
        fc.property(bigSpecRecipe, packetsRecipe(10, 40), limits, (spec, packets, options) => {
          const text = specText(spec, 40);
          const c = compileText(text);
          if (c === undefined) return;
          const { injections, inputs } = resolvePackets(c, packets, 40);
          agree(text, c, injections, inputs, options);
        }),
        { numRuns: Math.ceil(RUNS / 12) },
      );
    },
    timeFor(Math.ceil(RUNS / 12), 4 * CASE_MS),
  );

  it("over hundreds of packets in one data plane: no buffer outlives its packet", () => {
    // Live copies never exceed copyLimit + 1, so copyLimit + 2 buffers always suffice — unless one leaks.
    fc.assert(
      fc.property(specRecipe, packetsRecipe(100, 300), fc.integer({ min: 0, max: 6 }), (spec, packets, copyLimit) => {
        const text = specText(spec);
        const c = compileText(text);
        if (c === undefined) return;
        const { injections, inputs } = resolvePackets(c, packets);
        agree(text, c, injections, inputs, {
          hopLimit: 8,
          copyLimit,
          buffers: { slots: copyLimit + 2, slotLen: 1024, recordingBytes: 0 },
          batchPackets: 16,
        });
      }),
      { numRuns: 60 },
    );
  });
});

/** Composed cases per run of the main property's: STRATA_DIFF_RUNS scales both. */
const COMPOSED_RUNS = Math.ceil(RUNS / 3);

/** What a composed case exercised: rows of each composition action that hit, bridging links crossed, and layered at
 * their far end. */
function exercised(c: CompiledSpec, r: RefResult, seen: Map<string, number>): void {
  const count = (what: string, n: number): void => {
    if (n > 0) seen.set(what, (seen.get(what) ?? 0) + n);
  };
  for (const t of c.tables) {
    (r.hits.get(t.id) ?? []).forEach((n, i) => {
      const row = t.spec?.rows[t.rows[i]?.row ?? -1];
      if (row === undefined) return;
      if (
        row.action.kind === "session" ||
        row.action.kind === "link" ||
        row.action.kind === "shared-acquire" ||
        row.action.kind === "shared-forward"
      )
        count(row.action.kind, n);
      if (row.in === "shared") count("in: shared", n);
      // Seed Figure 8: a bridging link implemented by a session, at the end whose network does not declare it.
      const sent = c.links.find((l) => l.sender === t.member && l.senderOutLink === row.out);
      if (row.action.kind === "session" && sent !== undefined && c.members[t.member]?.network !== sent.network)
        count("session on a bridging link at its far end", n);
    });
  }
  c.links.forEach((l, i) => {
    const bridging = [l.sender, ...l.receivers.map((x) => x.member)].some(
      (m) => m >= 0 && c.members[m]?.network !== l.network,
    );
    if (bridging) count("bridging link", r.linkPackets[i] ?? 0);
  });
  // The overlay's shared member sending straight onto a shared link: a forward row of it naming the link's identifier.
  const sharedOuts = new Set(c.sharedOutLinks.map((p) => `${p.member}:${p.outLink}`));
  for (const t of c.tables.filter((x) => x.role === "forward")) {
    (r.hits.get(t.id) ?? []).forEach((n, i) => {
      const a = t.spec?.rows[t.rows[i]?.row ?? -1]?.action;
      if (a?.kind === "out" && a.outLinks.some((p) => sharedOuts.has(`${t.member}:${p}`)))
        count("overlay out on a shared link", n);
    });
  }
  r.outputs.forEach((o) => {
    if (o.kind === "deliver") count(`delivered in ${c.networks[c.members[o.target]?.network ?? -1]?.name ?? "?"}`, 1);
  });
}

describe("strata run = reference interpreter, composed", () => {
  // Layered paths are long (each virtual link is a hop, then the underlay's): hop limits reach further.
  const composedLimits = fc.record({
    hopLimit: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 16, max: 64 })),
    copyLimit: fc.integer({ min: 0, max: 40 }),
    batchPackets: fc.constantFrom(3, 256),
    buffers: fc.record({
      slots: fc.constant(64),
      slotLen: fc.constantFrom(1024, 4096),
      recordingBytes: fc.constantFrom(0, 1 << 16),
      traceEvents: fc.constantFrom(1, 1 << 12), // 1: the smallest ring, which hand-overs, pushes and pops must fit too
    }),
    trace: fc.boolean(),
    traceMask: fc.option(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), { nil: undefined }), // --trace-packets
  });

  it(
    "on layered, subducted and bridged descriptions",
    () => {
      const ran = new Map<string, number>();
      const skipped = new Map<string, number>();
      const seen = new Map<string, number>();
      const add = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + 1);
      fc.assert(
        fc.property(
          composedRecipe,
          packetsRecipe(2, 12),
          composedLimits,
          fc.nat(1_000_000),
          (recipe, packets, options, first) => {
            const text = composedText(recipe);
            const c = compileText(text);
            if (c === undefined) return add(skipped, recipe.kind);
            const { injections, inputs } = resolvePackets(c, packets);
            const ref = agree(text, c, injections, inputs, options, first);
            if (ref === undefined) return add(skipped, recipe.kind);
            add(ran, recipe.kind);
            exercised(c, ref, seen);
          },
        ),
        { numRuns: COMPOSED_RUNS },
      );
      if (process.env["STRATA_DIFF_VERBOSE"] === "1") console.log({ ran, skipped, seen });
      for (const kind of ["layered", "subducted", "bridged"])
        expect(skipped.get(kind) ?? 0, kind).toBeLessThan((ran.get(kind) ?? 0) / 5);
      // Every step of composition ran, and packets reached the top of three-level stacks.
      expect([...seen.keys()].filter((k) => !k.startsWith("delivered")).sort()).toEqual(
        [
          "session",
          "link",
          "shared-acquire",
          "shared-forward",
          "in: shared",
          "bridging link",
          "overlay out on a shared link",
          "session on a bridging link at its far end",
        ].sort(),
      );
      expect(seen.get("delivered in n2") ?? 0).toBeGreaterThan(0);
    },
    timeFor(COMPOSED_RUNS, 2 * CASE_MS),
  );
});

/** A hand-written description, and its endpoints resolved as the command line resolves them. */
function fixture(text: string, endpoints: readonly string[]): { c: CompiledSpec; injections: Injection[] } {
  const c = compile(parseSpec(text, "fixture.yaml"));
  return { c, injections: endpoints.map((e) => resolveEndpoint(c, e)) };
}

/** agree() on a description that must install. */
function agreed(
  text: string,
  c: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  options: EngineRunOptions & RefOptions,
): RefResult {
  const r = agree(text, c, injections, inputs, options);
  if (r === undefined) throw new Error(`${text} did not install`);
  return r;
}

const input = (bytes: Uint8Array, endpoint = 0): RefInput => ({
  bytes,
  origLen: bytes.length,
  tsSec: 1,
  tsNsec: 2,
  endpoint,
});

/** Drop counts of one reason per member, by qualified name (members without any left out). */
function dropsOf(
  c: CompiledSpec,
  drops: ReadonlyMap<number, readonly number[]>,
  reason: (typeof DROP_REASONS)[number],
): Record<string, number> {
  const k = DROP_REASONS.indexOf(reason);
  return Object.fromEntries(
    [...drops.entries()].flatMap(([m, counts]) =>
      (counts[k] ?? 0) > 0 ? [[c.members[m]?.qualified ?? "(outside)", counts[k] ?? 0]] : [],
    ),
  );
}

describe("limits, on both sides", () => {
  // Three routers in a one-way ring, each forwarding everything to the next: a packet goes round
  // until the hop limit (loop) or its TTL (ttl-expired) stops it, whichever comes first.
  const ring = (header: string, ttl: string): string => `
networks:
  ring:
    header: ${header}
    ttl: ${ttl}
    members: { a: { name: 10.0.0.1 }, b: { name: 10.0.0.2 }, c: { name: 10.0.0.3 } }
    links:
      - { from: a.1, to: b.1 }
      - { from: b.2, to: c.1 }
      - { from: c.2, to: a.2 }
    tables:
      a: { acquire: [ { do: forward } ], forward: [ { out: 1 } ] }
      b: { acquire: [ { do: forward } ], forward: [ { out: 2 } ] }
      c: { acquire: [ { do: forward } ], forward: [ { out: 2 } ] }
`;

  it("a ring: every crossing is an output until the hop limit drops the packet as a loop", () => {
    const { c, injections } = fixture(ring("ipv4", "keep"), ["ring:a"]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), (hopLimit) => {
        const inputs = [input(ipv4Packet({ ttl: 3 }))];
        const r = agreed("(ring)", c, injections, inputs, { hopLimit, copyLimit: 0 });
        expect(r.outputs).toHaveLength(hopLimit);
        expect(dropsOf(c, r.drops, "loop")).toEqual({ [["ring.a", "ring.b", "ring.c"][hopLimit % 3] ?? ""]: 1 });
      }),
      { numRuns: 60 },
    );
  });

  it("a ring of routers that decrement TTL: ttl-expired or loop, whichever comes first", () => {
    const { c, injections } = fixture(ring("ipv4", "decrement"), ["ring:a", "ring:a.1"]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 255 }),
        fc.nat(1),
        (hopLimit, ttl, endpoint) => {
          const inputs = [input(ipv4Packet({ ttl }), endpoint)];
          const r = agreed("(ring with ttl: decrement)", c, injections, inputs, { hopLimit, copyLimit: 0 });
          // Sent by a itself, the packet is not decremented at a; each member after that decrements it once.
          const crossings = Math.min(hopLimit, Math.max(ttl, 1));
          expect(r.outputs).toHaveLength(crossings);
          expect(dropsOf(c, r.drops, hopLimit < Math.max(ttl, 1) ? "loop" : "ttl-expired")).toEqual({
            [["ring.a", "ring.b", "ring.c"][crossings % 3] ?? ""]: 1,
          });
        },
      ),
      { numRuns: 80 },
    );
  });

  // s replicates onto 8 links (one copy per extra out-link), and an allcast link from outside reaches 8 receivers.
  const receiverTables = [1, 2, 3, 4, 5, 6, 7, 8]
    .map((i) => `      r${i}: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }`)
    .join("\n");
  const fanOut =
    `
networks:
  star:
    header: cna
    members: { s: { name: 100 }, r1: { name: 1 }, r2: { name: 2 }, r3: { name: 3 }, r4: { name: 4 }, ` +
    `r5: { name: 5 }, r6: { name: 6 }, r7: { name: 7 }, r8: { name: 8 } }
    links:
${[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `      - { from: s.${i}, to: r${i}.1 }`).join("\n")}
      - { external: up, to: [r1.2, r2.2, r3.2, r4.2, r5.2, r6.2, r7.2, r8.2], mode: allcast, group: all }
    tables:
      s: { forward: [ { out: [1, 2, 3, 4, 5, 6, 7, 8] } ] }
${receiverTables}
`;

  it("a fan-out past copyLimit: the copies past it are not made, each counted as replication-limit", () => {
    const { c, injections } = fixture(fanOut, ["star:s", "star:up"]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), fc.nat(1), (copyLimit, endpoint) => {
        const inputs = [input(cnaPacket(), endpoint), input(cnaPacket(), endpoint)];
        const r = agreed("(fan-out)", c, injections, inputs, { hopLimit: 8, copyLimit });
        // Per input packet: the original and min(7, copyLimit) copies are delivered; the other copies are refused.
        const made = Math.min(7, copyLimit);
        expect(r.outputs.filter((o) => o.kind === "deliver")).toHaveLength(2 * (1 + made));
        expect(dropsOf(c, r.drops, "replication-limit")).toEqual(
          made === 7 ? {} : { [endpoint === 0 ? "star.s" : "(outside)"]: 2 * (7 - made) },
        );
      }),
      { numRuns: 40 },
    );
  });
});

describe("every example's captures, on both sides", () => {
  const root = new URL("../../", import.meta.url);
  const examples = REPLAY_EXAMPLES;

  it.each(examples)("%s", (name) => {
    const text = readFileSync(new URL(`examples/${name}/network.yaml`, root), "utf8");
    const { inputs: files } = JSON.parse(readFileSync(new URL(`examples/${name}/example.json`, root), "utf8")) as {
      inputs: string[];
    };
    const { c, injections } = fixture(
      text,
      files.map((f) => f.slice(0, f.indexOf("="))),
    );
    const inputs: RefInput[] = [];
    files.forEach((f, endpoint) => {
      const reader = openCapture(new URL(f.slice(f.indexOf("=") + 1), root).pathname);
      try {
        for (const b of reader.batches()) {
          for (let i = 0; i < b.count; i++) {
            const at = b.offset[i] ?? 0;
            inputs.push({
              bytes: b.data.slice(at, at + (b.capLen[i] ?? 0)),
              origLen: b.origLen[i] ?? 0,
              tsSec: b.tsSec[i] ?? 0,
              tsNsec: b.tsNsec[i] ?? 0,
              endpoint,
            });
          }
        }
      } finally {
        reader.close();
      }
    });
    const r = agreed(name, c, injections, inputs, { hopLimit: 64, copyLimit: 64 });
    expect(r.outputs.length).toBeGreaterThan(0);
  });
});

// Disagreements the tests above once found, each kept as its smallest case.
describe("found by the property tests", () => {
  it("TPID 0x9100 (Q-in-Q before 802.1ad) is a VLAN tag: vid 5 is delivered at b as sent, vid 6 is not", () => {
    const { c, injections } = fixture(
      `
networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      b: { acquire: [ { match: { vid: 5 }, do: receive } ], receive: [ { do: deliver } ] }
`,
      ["lan:a.1"],
    );
    // The reference once read 0x9100 as the ethertype: no vid, an acquire-miss at b for both frames.
    const frame = (vid: number): Uint8Array =>
      ethernetFrame({
        tags: [{ tpid: 0x9100, vid }],
        type: 0x0800,
        payload: Uint8Array.from({ length: 46 }, (_, i) => i),
      });
    const inputs = [input(frame(5)), input(frame(6))];
    agreed("(0x9100)", c, injections, inputs, { hopLimit: 8, copyLimit: 8 });
    // What strata writes, not only that both sides agree (both could be wrong the same way): both frames cross the
    // link; b receives the vid 5 one, byte for byte, and drops the other at acquire.
    const ran = runEngine(c, ["lan:a.1"], inputs, 0, { hopLimit: 8, copyLimit: 8 });
    const files = Object.fromEntries(
      [...ran.recorded.files].map(([f, records]) => [f, records.map((r) => hex(r.bytes))]),
    );
    expect(files).toEqual({
      "links/lan.a.1-b.1": [hex(frame(5)), hex(frame(6))],
      "delivered/lan.b": [hex(frame(5))],
    });
    expect(dropsOf(c, dropsByMember(ran), "acquire-miss")).toEqual({ "lan.b": 1 });
  });
});
