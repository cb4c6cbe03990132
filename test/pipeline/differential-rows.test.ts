// The compiler against the description: a compiled row must match exactly the
// keys its written patterns match, and the row that wins a lookup must be the one
// the description's rule picks (src/model/rows.ts). The main differential test
// runs the wasm pipeline against the reference, which reads the written rows;
// this one looks at the compiled entries themselves, without the data plane.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import type { CompiledTable } from "../../src/control/compiled.js";
import { parseSpec } from "../../src/description/load.js";
import { LINK_SELF } from "../../src/wasm/abi.js";
import type { EntryMatch } from "../../src/wasm/tables.js";
import type { KeyLayout } from "../../src/wire/designs.js";
import { type Fields, headerDesign } from "../../src/model/headers.js";
import { rowMatches, winner } from "../../src/model/rows.js";
import { compileText, pool, specRecipe, specText, timeFor } from "./helpers/cases.js";
import { cnaPacket } from "./helpers/packets.js";
import { rowHits, runEngine } from "./helpers/engine-run.js";

// ── The compiled side: entries over key vectors, as the data plane's tables hold them ──

/** Field values into a design's key vector (the registry's layout); the in-link first. */
function keyVector(layout: KeyLayout, inLink: number, f: Fields): Uint8Array {
  const key = new Uint8Array(layout.len);
  for (const s of layout.slots) {
    let v = s.field.name === "in" ? BigInt(inLink) : (f.get(s.field.name) ?? 0n);
    for (let i = s.len - 1; i >= 0; i--) {
      key[s.offset + i] = Number(v & 0xffn);
      v >>= 8n;
    }
  }
  return key;
}

/** Big-endian byte strings of one length compare as the numbers they hold. */
function compare(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Whether an entry matches a key: masked bytes equal, and range fields within their bounds. */
function entryMatches(t: CompiledTable, m: EntryMatch, key: Uint8Array): boolean {
  for (let i = 0; i < t.keyLen; i++) if (((key[i] ?? 0) & (m.mask[i] ?? 0)) !== m.value[i]) return false;
  if (t.kind !== "range") return true;
  return t.fields.every((f) => {
    if (f.kind !== "range") return true;
    const k = key.subarray(f.offset, f.offset + f.len);
    return (
      compare(k, (m.lo ?? new Uint8Array(t.keyLen)).subarray(f.offset, f.offset + f.len)) >= 0 &&
      compare(k, (m.hi ?? new Uint8Array(t.keyLen)).subarray(f.offset, f.offset + f.len)) <= 0
    );
  });
}

const ones = (mask: Uint8Array): number =>
  mask.reduce((n, byte) => n + [...byte.toString(2)].filter((c) => c === "1").length, 0);

/** The winning entry: LPM the longest prefix; ternary, range, optional the highest priority, then the earlier; exact
 * the one. */
function bestEntry(t: CompiledTable, key: Uint8Array): number {
  let best = -1;
  t.rows.forEach((r, i) => {
    if (!entryMatches(t, r.match, key)) return;
    const b = t.rows[best]?.match;
    if (b === undefined) best = i;
    else if (t.kind === "lpm" ? ones(r.match.mask) > ones(b.mask) : t.kind !== "exact" && r.match.priority > b.priority)
      best = i;
  });
  return best;
}

/** Descriptions tried; STRATA_DIFF_RUNS (see differential.test.ts) searches longer. */
const RUNS = Math.ceil(Number(process.env["STRATA_DIFF_RUNS"] ?? 1200) / 4);

const keyPicks = fc.array(fc.array(fc.nat(63), { minLength: 12, maxLength: 12 }), { minLength: 24, maxLength: 24 });

describe("compiled rows = the description's rows", () => {
  it(
    "match the same keys, and the same row wins",
    () => {
      fc.assert(
        fc.property(specRecipe, keyPicks, (recipe, picks) => {
          const text = specText(recipe);
          const c = compileText(text);
          if (c === undefined) return;
          for (const t of c.tables) {
            if (t.role !== "acquire" && t.role !== "forward" && t.role !== "receive") continue;
            const m = c.members[t.member];
            const net = c.networks[m?.network ?? -1];
            if (m === undefined || net === undefined) continue;
            const design = headerDesign(net.spec.design.name);
            const names = c.members.filter((x) => x.network === net.index).map((x) => x.spec.nameValue);
            const ins = [
              ...new Set(c.links.flatMap((l) => l.receivers.filter((r) => r.member === m.index).map((r) => r.inLink))),
            ];
            const registry = net.spec.design;
            const pools = registry.fields.map((f) => pool(registry, f.name, names));
            for (const p of picks) {
              const fields = new Map(
                registry.fields.map((f, i) => [f.name, pools[i]?.[(p[i] ?? 0) % (pools[i]?.length ?? 1)] ?? 0n]),
              );
              const port =
                t.role === "receive" ? 0 : ([...ins, LINK_SELF][(p[11] ?? 0) % (ins.length + 1)] ?? LINK_SELF);
              const inLink = t.role === "receive" ? undefined : port === LINK_SELF ? "self" : port;
              const key = keyVector(net.layout, port, fields);
              const spec = t.spec;
              if (spec === undefined) continue;
              const compiled = t.rows.map((r) => entryMatches(t, r.match, key));
              const written = spec.rows.map((r) => rowMatches(design, r, inLink, fields));
              const best = t.rows[bestEntry(t, key)]?.row ?? -1;
              const wins = winner(design, spec, inLink, fields);
              // vitest's expect costs more than the comparison (it counts every assertion): it is called only to
              // report a disagreement, 1200 descriptions × 24 keys × their tables of them.
              if (best === wins && compiled.length === written.length && compiled.every((b, i) => b === written[i]))
                continue;
              const where =
                `${m.qualified}.${t.role} (${t.kind}), ` +
                `in ${String(inLink)}, ${[...fields].map(([k, v]) => `${k} ${v}`).join(", ")}\n${text}`;
              expect(compiled, `rows matching in ${where}`).toEqual(written);
              expect(best, `winner in ${where}`).toBe(wins);
            }
          }
        }),
        { numRuns: RUNS },
      );
    },
    timeFor(RUNS),
  );
});

// Disagreements the tests above once found, each kept as its smallest case.
describe("found by the property tests", () => {
  /** Which forward row of member r a cna packet to `dst` hits, run through the data plane as strata run runs it. */
  function forwardRowHit(rows: string, dst: bigint, kind?: string): string[] {
    // The rows as they are, or under `rows:` beside the table's kind.
    const table = kind === undefined ? rows : `          kind: ${kind}\n          rows:\n${rows.replace(/^/gm, "  ")}`;
    const c = compile(
      parseSpec(
        `
networks:
  n:
    header: cna
    members: { s: { name: 1 }, r: { name: 2 }, x: { name: 3 }, y: { name: 4 } }
    links: [ { from: s.1, to: r.1 }, { from: r.2, to: x.1 }, { from: r.3, to: y.1 } ]
    tables:
      r:
        acquire: [ { do: forward } ]
        forward:
${table}
`,
        "known.yaml",
      ),
    );
    const bytes = cnaPacket({ dst });
    const hits = rowHits(
      runEngine(c, ["n:s.1"], [{ bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0, endpoint: 0 }], 0, {
        hopLimit: 8,
        copyLimit: 8,
      }),
    );
    const forward = c.members.find((m) => m.qualified === "n.r")?.tables.forward;
    return (forward?.rows ?? []).flatMap((row, i) => ((hits.get(forward?.id ?? -1)?.[i] ?? 0) > 0 ? [row.text] : []));
  }

  it("a prefix on a field another row matches by range is the range it stands for", () => {
    // Row 0 is dst 0/1 (dst < 2^31); 0x80000005 is not in it, nor in 5..9: nothing should match.
    expect(
      forwardRowHit(
        `          - { match: { dst: "0/1" }, out: 2 }\n          - { match: { dst: "5..9" }, out: 3 }`,
        0x80000005n,
      ),
    ).toEqual([]);
  });

  it("which of two rows wins does not depend on a third row that matches neither's packets", () => {
    // The /8 is written first, so it wins for 10.0.0.5 whether or not a ternary row elsewhere
    // makes the table ternary: the compiler keeps LPM only when it agrees with the order.
    const two =
      `          - { match: { dst: "0x0a000000/8" }, out: 2 }\n          - { ` +
      `match: { dst: "0x0a000005/32" }, out: 3 }`;
    const three = `${two}\n          - { match: { dst: "0xc0a80000 &&& 0xffff0000" }, out: 2 }`;
    expect(forwardRowHit(three, 0x0a000005n)).toEqual(forwardRowHit(two, 0x0a000005n));
    expect(forwardRowHit(two, 0x0a000005n)).toEqual(["dst 167772160/8 → out 2"]);
  });

  it("written `kind: lpm`, the longest prefix wins whatever the order", () => {
    const rows =
      `          - { match: { dst: "0x0a000000/8" }, out: 2 }\n          - { ` +
      `match: { dst: "0x0a000005/32" }, out: 3 }`;
    expect(forwardRowHit(rows, 0x0a000005n, "lpm")).toEqual(["dst 167772165/32 → out 3"]);
  });
});
