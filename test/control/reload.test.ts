// A reload after an edit equals a whole load of the edited file, byte for byte (the compiled description, every
// machine's desired state), and costs what the edit touched: a row changed in one member's tables is that member read
// and compiled alone and that machine's desired state built again; anything else is a whole load. Each edit is made
// to the base and then taken back, the second reload read against the first.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { fatTreeSpec } from "../../bench/descriptions.js";
import { compile } from "../../src/control/compile.js";
import { Reloader } from "../../src/control/reload.js";
import { desiredAfter, desiredState, type MachineDesired } from "../../src/deploy/desired.js";
import { parseSpec } from "../../src/description/load.js";
import { SpecError } from "../../src/description/problems.js";

const dir = mkdtempSync(join(tmpdir(), "strata-reload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FAT_TREE = fatTreeSpec(2, 2, 2).yaml;
/** Three networks, `ip` layered on two LANs (receive rows that hand packets up, transmit rows to sessions). */
const LAYERED = readFileSync(new URL("../../examples/ip-router/network.yaml", import.meta.url), "utf8");

/** Text replaced once, where `from` must be found. */
function edit(from: string | RegExp, to: string): (text: string) => string {
  return (text) => {
    const out = text.replace(from, to);
    if (out === text) throw new Error(`no ${String(from)} in the base`);
    return out;
  };
}

/** A value as plain text: maps, sets, bytes and bigints spelled out, keys in their order; functions left out. `seen`:
 * the objects above this one (pushed and popped, not copied: the texts run to megabytes). */
function canonical(value: unknown, seen: unknown[] = []): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "function") return "fn";
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "undefined";
  if (seen.includes(value)) throw new Error("a cycle");
  if (ArrayBuffer.isView(value))
    return `<${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}>`;
  seen.push(value);
  const text = Array.isArray(value)
    ? `[${value.map((v) => canonical(v, seen)).join(",")}]`
    : value instanceof Map
      ? `Map{${[...value].map(([k, v]) => `${canonical(k)}:${canonical(v, seen)}`).join(",")}}`
      : value instanceof Set
        ? `Set{${[...value].map((v) => canonical(v, seen)).join(",")}}`
        : `{${Object.entries(value)
            .map(([k, v]) => `${k}:${canonical(v, seen)}`)
            .join(",")}}`;
  seen.pop();
  return text;
}

/** `got` equal to `want`, or the place they part said in a line (the texts run to megabytes). */
function expectSame(got: string, want: string): void {
  // Equal texts are compared whole; the place they part is looked for only when they differ.
  let i = 0;
  if (got !== want) while (i < got.length && got[i] === want[i]) i++;
  expect(got === want ? "" : `at ${i}: ${got.slice(i - 80, i + 80)} | ${want.slice(i - 80, i + 80)}`).toBe("");
}

/** What a machine's desired state is: its P4Info (encoded), program, cookie and every entity, with its origin. */
const desiredText = (ds: readonly MachineDesired[]): string => canonical(ds.map((d) => ({ ...d, p4info: undefined })));

/** Whole-load figures to hold a reload to: compiled and desired state, or the error's lines. */
function fresh(text: string, file: string): { compiled: string; desired: string } | string {
  try {
    const compiled = compile(parseSpec(text, file, { warn: () => {} }));
    return { compiled: canonical(compiled), desired: desiredText(desiredState(compiled, file)) };
  } catch (e) {
    if (e instanceof SpecError) return e.lines().join("\n");
    throw e;
  }
}

interface Case {
  readonly name: string;
  readonly edit: (text: string) => string;
  /** How the edit is loaded: one member alone, the whole, or not at all (the error, the one before kept). */
  readonly cost: "member" | "whole" | "error";
  /** Entities built again for a row edited in place (the rest are the ones built before); unchecked when undefined. */
  readonly entities?: number;
  /** The description edited: the fat tree unless said. */
  readonly base?: string;
}

const CASES: readonly Case[] = [
  {
    name: "a row's out-link changed",
    edit: edit(
      'out: 1 }\n          - { match: { dst: "02:00:00:00:00:02" }, out: 1 }',
      'out: 2 }\n          - { match: { dst: "02:00:00:00:00:02" }, out: 1 }',
    ),
    cost: "member",
    entities: 1,
  },
  {
    name: "a row's match changed",
    edit: edit('{ match: { dst: "02:00:00:00:00:01" }, out: 1 }', '{ match: { dst: "02:00:00:00:00:09" }, out: 1 }'),
    cost: "member",
    entities: 1,
  },
  {
    name: "a host's acquire row changed",
    edit: edit('acquire: [ { match: { dst: "02:00:00:00:00:07" }, do: receive } ]', "acquire: [ { do: receive } ]"),
    cost: "member",
  },
  {
    name: "a comment added at a row's end",
    edit: edit("out: 3 }\n      h3:", "out: 3 } # up\n      h3:"),
    cost: "member",
  },
  {
    name: "the last member's last row changed",
    edit: edit(/out: 2 \}\n$/, "out: 1 }\n"),
    cost: "member",
  },
  {
    name: "a row added",
    edit: edit(
      "          - { out: 3 }\n      h3:",
      '          - { match: { dst: "02:00:00:00:00:0a" }, out: 1 }\n          - { out: 3 }\n      h3:',
    ),
    cost: "whole",
  },
  {
    name: "a row removed",
    edit: edit('          - { match: { dst: "02:00:00:00:00:02" }, out: 2 }\n', ""),
    cost: "whole",
  },
  {
    name: "a row's out-link one the member does not have",
    edit: edit('{ match: { dst: "02:00:00:00:00:01" }, out: 1 }', '{ match: { dst: "02:00:00:00:00:01" }, out: 9 }'),
    cost: "error",
  },
  { name: "a row's action misspelt", edit: edit("do: deliver", "do: delivr"), cost: "error" },
  {
    name: "two members' rows changed",
    edit: (t) =>
      edit(
        'acquire: [ { match: { dst: "02:00:00:00:00:01" }, do: receive } ]',
        "acquire: [ { do: receive } ]",
      )(edit("{ out: 3 }\n      h3:", "{ out: 2 }\n      h3:")(t)),
    cost: "whole",
  },
  {
    name: "a table added to a member",
    edit: edit(
      "        receive: [ { do: deliver } ]\n      h2:",
      "        receive: [ { do: deliver } ]\n        forward: [ { out: 1 } ]\n      h2:",
    ),
    cost: "whole",
  },
  {
    name: "a table's kind written (a key added in the same line count)",
    edit: edit(
      "      e1:\n        acquire: [ { do: forward } ]",
      "      e1:\n        acquire: { kind: exact, rows: [ { do: forward } ] }",
    ),
    cost: "member",
  },
  {
    name: "a member added",
    edit: edit("      h8: {", '      h9: { name: "02:00:00:00:00:19" }\n      h8: {'),
    cost: "whole",
  },
  {
    name: "a link removed (and the row that sent on it)",
    edit: (t) =>
      edit(
        '{ match: { dst: "02:00:00:00:00:08" }, out: 2 }\n          - { out: 3 }',
        "{ out: 3 }",
      )(edit("      - { from: h8.1, to: e4.2, mode: two-way }\n", "")(t)),
    cost: "whole",
  },
  {
    name: "a link's mode changed",
    edit: edit("{ from: h8.1, to: e4.2, mode: two-way }", "{ from: h8.1, to: e4.2 }"),
    cost: "error", // e4's row for h8 sends on it
  },
  { name: "the network renamed", edit: edit("  lan:", "  lan2:"), cost: "whole" },
  { name: "a member's key renamed with its tables", edit: (t) => t.replace(/\bh8\b/g, "h9"), cost: "whole" },
  {
    name: "a member's tables key written in another place on its line",
    edit: edit("      h1:\n", "      h1:  \n"),
    cost: "member",
  },
  { name: "a file that does not parse", edit: edit("      - { out: 3 }", "      - { out: 3 "), cost: "error" },
  { name: "the file emptied", edit: () => "", cost: "error" },
  {
    name: "layered: a row of the IP router's forward table changed",
    base: LAYERED,
    edit: edit("- { match: { dst: 10.0.2.0/24 }, out: 2 }", "- { match: { dst: 10.0.3.0/24 }, out: 2 }"),
    cost: "member",
  },
  {
    name: "layered: a receive row that hands packets up changed",
    base: LAYERED,
    edit: edit(
      "receive:  [ { match: { type: 0x0800 }, do: { link: ip.2 } } ]",
      "receive:  [ { match: { type: 0x0806 }, do: { link: ip.2 } } ]",
    ),
    cost: "whole",
  },
];

describe("a reload equals a whole load of the edited file", () => {
  test.each(CASES)("$name", ({ edit: change, cost, entities, base: BASE = FAT_TREE }) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, BASE);
    const reloader = new Reloader(file);
    const first = reloader.load(BASE);
    expect(first?.members).toBeUndefined();
    let desired = desiredState(first?.compiled ?? compile(parseSpec(BASE, file)), file);
    const edited = change(BASE);
    expect(edited).not.toBe(BASE);
    for (const [text, expected] of [
      [edited, cost],
      [BASE, cost === "error" ? "none" : cost],
    ] as const) {
      writeFileSync(file, text);
      const want = fresh(text, file);
      expect(typeof want === "string").toBe(expected === "error");
      const before = { ...reloader.work };
      if (typeof want === "string") {
        expect(() => reloader.load(text)).toThrow(SpecError);
        try {
          reloader.load(text);
        } catch (e) {
          expect((e as SpecError).lines().join("\n")).toBe(want);
        }
        expect(reloader.text).not.toBe(text);
        continue;
      }
      const r = reloader.load(text);
      if (expected === "none") {
        expect(r).toBeUndefined();
        continue;
      }
      if (r === undefined) throw new Error(`no reload of ${text === BASE ? "the base" : "the edit"}`);
      expectSame(canonical(r.compiled), want.compiled);
      const next = desiredAfter(desired, r, file, new Set(r.compiled.machines));
      expectSame(desiredText(next), want.desired);
      const rebuilt = next.filter((d, i) => d !== desired[i]).length;
      const held = new Set(desired.flatMap((d) => d.entities));
      const built = next.flatMap((d) => d.entities).filter((e) => !held.has(e)).length;
      desired = next;
      const work = { loads: reloader.work.loads - before.loads, members: reloader.work.members - before.members };
      if (expected === "member") {
        expect(work).toEqual({ loads: 0, members: 1 });
        expect(r.members?.size).toBe(1);
        expect(rebuilt).toBe(1);
        if (entities !== undefined) expect(built).toBe(entities);
      } else expect(work).toEqual({ loads: 1, members: 0 });
    }
  });
});

// Lines keep their numbers after a member's edit, and those after it move by what it added: an edit further down is
// read against where its lines are now. Each text is the one before, edited again; each reload one member's.
describe("edits one after another, each read against the one before", () => {
  const commentAdded = edit("out: 3 }\n      h3:", "out: 3 } # up\n      h3:");
  const acquireShortened = edit(
    'acquire: [ { match: { dst: "02:00:00:00:00:07" }, do: receive } ]',
    "acquire: [ { do: receive } ]",
  );
  const lastRow = edit(/out: 2 \}\n$/, "out: 1 }\n");
  // e1's first forward row and its last, in the same member's lines.
  const e1First = edit(
    '"02:00:00:00:00:01" }, out: 1 }\n          - { match: { dst: "02:00:00:00:00:02" }, out: 2 }',
    '"02:00:00:00:00:01" }, out: 1 } # to h1\n          - { match: { dst: "02:00:00:00:00:02" }, out: 2 }',
  );
  const e1Last = edit("- { out: 3 }\n      h3:", "- { out: 2 }\n      h3:");
  const SEQUENCES = [
    { name: "a comment added, then the last member's last row changed", edits: [commentAdded, lastRow] },
    { name: "a host's acquire row shortened, then the last member's last row", edits: [acquireShortened, lastRow] },
    { name: "the last row first, then a comment added above it", edits: [lastRow, commentAdded] },
    { name: "a comment added to a member's row, then its last row changed", edits: [e1First, e1Last] },
  ];
  test.each(SEQUENCES)("$name", ({ edits }) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
    let text = FAT_TREE;
    writeFileSync(file, text);
    const reloader = new Reloader(file);
    reloader.load(text);
    for (const change of edits) {
      text = change(text);
      writeFileSync(file, text);
      const want = fresh(text, file);
      if (typeof want === "string") throw new Error(want);
      const before = { ...reloader.work };
      const r = reloader.load(text);
      expectSame(canonical(r?.compiled), want.compiled);
      expect({ loads: reloader.work.loads - before.loads, members: reloader.work.members - before.members }).toEqual({
        loads: 0,
        members: 1,
      });
    }
  });
});
