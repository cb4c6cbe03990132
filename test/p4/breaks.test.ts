// A deliberate break fails: each case takes a valid export (the p4-features
// fixture's machine s, which has every kind of match, a selector, multicast
// and a keyless table) and breaks one thing; checkExport must report it.

import { describe, expect, it } from "vitest";
import { canonical, base64 } from "../../src/p4/bytes.js";
import { exportFiles, exportSpec } from "./helpers/examples.js";
import { checkExport } from "./helpers/official.js";

type Json = Record<string, unknown> & { [k: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
type Files = ReturnType<typeof exportFiles>;

const ex = exportSpec("test/fixtures/specs/p4-features.yaml").find((e) => e.manifest.machine === "s");
if (ex === undefined) throw new Error("p4-features has no machine s");
const valid = (): Files => structuredClone(exportFiles(ex));

const updates = (f: Files): Json[] => (f.entries as Json).updates as Json[];
const tableEntries = (f: Files): Json[] =>
  updates(f).flatMap((u) => (u.entity.tableEntry !== undefined ? [u.entity.tableEntry as Json] : []));
const tables = (f: Files): Json[] => (f.p4info as Json).tables as Json[];
const tableOf = (f: Files, e: Json): Json => tables(f).find((t) => t.preamble.id === e.tableId) as Json;
/** The first entry with a match field of this kind, and that field's match. */
const withMatch = (f: Files, kind: string): { e: Json; m: Json } => {
  for (const e of tableEntries(f))
    for (const m of (e.match ?? []) as Json[]) if (m[kind] !== undefined) return { e, m };
  throw new Error(`no ${kind} match`);
};
/** An entry of a table of exact fields whose action has parameters. */
const exactTableEntry = (f: Files): Json => {
  const e = tableEntries(f).find(
    (x) =>
      x.match !== undefined &&
      (tableOf(f, x).matchFields as Json[]).every((m) => m.matchType === "EXACT") &&
      (x.action?.action?.params?.length ?? 0) > 0,
  );
  if (e === undefined) throw new Error("no exact table entry");
  return e;
};
const ternaryTableEntries = (f: Files): Json[] => {
  const e = tableEntries(f).find((x) => x.priority !== undefined);
  return tableEntries(f).filter((x) => x.tableId === e?.tableId);
};

/** [what is broken, how, a phrase the report must contain] */
const BREAKS: readonly [string, (f: Files) => void, string][] = [
  ["a misspelt field name in entries.json", (f) => (exactTableEntry(f).tabelId = 1), 'unknown field: "tabelId"'],
  [
    "a misspelt field name in p4info.json",
    (f) => ((tables(f)[0] as Json).matchFeilds = []),
    'unknown field: "matchFeilds"',
  ],
  ["a wrong enum value (update type)", (f) => ((updates(f)[0] as Json).type = "INSRT"), 'unknown enum value: "INSRT"'],
  [
    "a wrong enum value (match type)",
    (f) => (((tables(f)[0] as Json).matchFields as Json[])[0]!.matchType = "EXCT"),
    'unknown enum value: "EXCT"',
  ],
  [
    "a non-canonical bytestring (a leading zero byte)",
    (f) => (withMatch(f, "exact").m.exact.value = base64(Uint8Array.of(0, 1))),
    "is not canonical",
  ],
  [
    "a non-canonical action parameter (zero as two bytes)",
    (f) => (exactTableEntry(f).action.action.params[0].value = base64(Uint8Array.of(0, 0))),
    "is not canonical",
  ],
  ["an empty bytestring", (f) => (withMatch(f, "exact").m.exact.value = ""), "empty bytestring"],
  [
    "a value wider than its field",
    (f) => (withMatch(f, "exact").m.exact.value = base64(canonical(1n << 48n))),
    "does not fit",
  ],
  [
    "a ternary mask of 0 (a don't-care not left out)",
    (f) => (withMatch(f, "ternary").m.ternary = { value: "AA==", mask: "AA==" }),
    "ternary mask 0",
  ],
  [
    "ternary value bits outside the mask",
    (f) => (withMatch(f, "ternary").m.ternary = { value: base64(canonical(0xffn)), mask: base64(canonical(0xf0n)) }),
    "outside the mask",
  ],
  [
    "a range of every value (a don't-care not left out)",
    (f) => (withMatch(f, "range").m.range = { low: "AA==", high: base64(canonical(0xfffn)) }),
    "a range of every value",
  ],
  ["an exact field left out", (f) => (exactTableEntry(f).match = []), "left out"],
  ["a priority in an exact table", (f) => (exactTableEntry(f).priority = 3), "a priority in a table of exact"],
  ["no priority in a ternary table", (f) => delete ternaryTableEntries(f)[0]?.priority, "no priority"],
  [
    "priorities that do not fall in the order written",
    (f) => {
      const [a, b] = ternaryTableEntries(f);
      if (a && b) [a.priority, b.priority] = [b.priority, a.priority];
    },
    "decreasing priority",
  ],
  ["a priority that is a string (not an int32)", (f) => (ternaryTableEntries(f)[0]!.priority = "x"), "priority"],
  [
    "a table id of the action type",
    (f) => ((tables(f)[0] as Json).preamble.id = 0x01000001),
    "does not start with the table prefix",
  ],
  [
    "two tables with one id",
    (f) => ((tables(f)[1] as Json).preamble.id = (tables(f)[0] as Json).preamble.id),
    "is also",
  ],
  ["an int64 (table size) as a number", (f) => ((tables(f)[0] as Json).size = 1024), "canonical JSON mapping"],
  ["an entry for a table that does not exist", (f) => (exactTableEntry(f).tableId = 0x02000001), "no table"],
  ["an unknown match field id", (f) => (withMatch(f, "exact").m.fieldId = 99), "no such match field"],
  [
    "an action the table does not have",
    (f) =>
      (exactTableEntry(f).action.action.actionId = ((f.p4info as Json).actions as Json[]).find(
        (a) => a.preamble.alias === "receive_pop",
      )!.preamble.id),
    "is not one of the table's",
  ],
  ["entries.bin that is not entries.json", (f) => (f.entriesBin = f.entriesBin.slice(0, -3)), "entries.bin"],
  [
    "p4info.txtpb that is not p4info.json",
    (f) => (f.p4infoText = f.p4infoText.replace(/size: 1024/, "size: 1023")),
    "p4info.txtpb",
  ],
  [
    "an INSERT into a keyless table",
    (f) => {
      const u = updates(f).find((x) => x.type === "MODIFY");
      if (u) {
        u.type = "INSERT";
        delete u.entity.tableEntry.isDefaultAction;
      }
    },
    "keyless table",
  ],
  [
    "a group member written after its group",
    (f) => {
      const u = updates(f);
      const group = u.findIndex((x) => x.entity.actionProfileGroup !== undefined);
      const firstMember = u.findIndex((x) => x.entity.actionProfileMember !== undefined);
      u.splice(firstMember, 0, ...u.splice(group, 1));
    },
    "was not written before",
  ],
];

describe("a deliberate break fails", () => {
  it("the unbroken export passes", () => {
    expect(checkExport(valid())).toEqual([]);
  });

  it.each(BREAKS)("%s", (_, breakIt, phrase) => {
    const f = valid();
    breakIt(f);
    const problems = checkExport(f);
    expect(problems.join("\n")).toContain(phrase);
  });
});
