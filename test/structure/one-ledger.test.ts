// The ledger is the only copy of what the tables hold (issue 29): beside the
// data plane's own tables (src/wasm/), no module keeps table entries' matches
// or actions — EntryMatch, EntryAction, the data plane's terms — in a
// collection that outlives a call: no class field and no module-level variable
// outside src/control/ledger.ts has a type that reaches them through a Map,
// Set or array, in the data plane's terms or in P4Runtime's. What holds the
// description (the desired state, not what the tables hold: its compiled rows
// and the P4 devices made of them), what refers to the ledger's own entries,
// and what P4Runtime alone has of them is not a copy, and is passed over.

import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** Where entries may be held: the ledger, and the data plane's tables. */
const OWNERS = ["src/control/ledger.ts", "src/wasm/"];
/** What an entry's match and action are: the data plane's terms, and P4Runtime's (its field matches, the action an
 * entry names; StoredMatch, StoredEntry and EntryAct were the P4Runtime device's copy of every entry before it read the
 * ledger). */
const ENTRY_TYPES = new Set([
  "EntryMatch",
  "EntryAction",
  "FieldMatch",
  "TableAct",
  "StoredMatch",
  "StoredEntry",
  "EntryAct",
]);
/** Types that hold the description (the desired state), or are the ledger and its entries (not copies of them). */
const PASSED_OVER = new Set([
  "CompiledSpec",
  "CompiledTable",
  "CompiledRow",
  "Device",
  "DeviceTable",
  "DeviceEntry",
  "Ledger",
  "LedgerEntry",
  "Tables",
  // What only P4Runtime knows of a ledger's entry (its cookie, metadata, counter base, and the action as written where
  // the row does not give it back: a profile member or group, a multicast group's number), kept beside that entry.
  "Extras",
  // An entry the data plane has no row for (it names a member the device lacks): the ledger has nothing of it.
  "Rowless",
  // A Write batch's changes while it is staged: gone when the Write ends.
  "Pending",
]);
const COLLECTIONS = new Set(["Map", "ReadonlyMap", "WeakMap", "Set", "ReadonlySet", "Array", "ReadonlyArray"]);

/** Whether `type` reaches EntryMatch or EntryAction inside a collection (`inside`: already in one). */
function holdsEntries(checker: ts.TypeChecker, type: ts.Type, inside: boolean, seen: Set<ts.Type>, depth = 0): boolean {
  if (depth > 6 || seen.has(type)) return false;
  seen.add(type);
  const name = (type.aliasSymbol ?? type.getSymbol())?.getName() ?? "";
  if (PASSED_OVER.has(name)) return false;
  if (ENTRY_TYPES.has(name)) return inside;
  if (type.isUnionOrIntersection()) return type.types.some((t) => holdsEntries(checker, t, inside, seen, depth + 1));
  const args = checker.getTypeArguments(type as ts.TypeReference) ?? [];
  const collection = COLLECTIONS.has(name) || checker.isArrayType(type) || checker.isTupleType(type);
  if (collection || args.length > 0)
    return args.some((t) => holdsEntries(checker, t, inside || collection, seen, depth + 1));
  if ((type.flags & ts.TypeFlags.Object) === 0) return false;
  return checker
    .getPropertiesOfType(type)
    .some((p) => holdsEntries(checker, checker.getTypeOfSymbol(p), inside, seen, depth + 1));
}

/** Class fields and module-level variables, in the files given: where each is and its type. */
function holders(program: ts.Program, files: readonly string[]): { where: string; type: ts.Type }[] {
  const checker = program.getTypeChecker();
  const out: { where: string; type: ts.Type }[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`not in the program: ${file}`);
    const at = (n: ts.Node, name: string): string =>
      `${file.slice(ROOT.length + 1)}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1} ${name}`;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyDeclaration(node))
        out.push({ where: at(node, node.name.getText(source)), type: checker.getTypeAtLocation(node) });
      if (ts.isVariableStatement(node) && node.parent === source)
        for (const d of node.declarationList.declarations)
          out.push({ where: at(d, d.name.getText(source)), type: checker.getTypeAtLocation(d) });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

function programOf(names: Record<string, string>): { program: ts.Program; files: string[] } {
  const files = Object.keys(names);
  const host = ts.createCompilerHost({ strict: true });
  const read = host.readFile.bind(host);
  host.readFile = (f) => names[f] ?? read(f);
  host.fileExists = (f) => f in names || ts.sys.fileExists(f);
  const getSource = host.getSourceFile.bind(host);
  host.getSourceFile = (f, v) => (f in names ? ts.createSourceFile(f, names[f] ?? "", v, true) : getSource(f, v));
  return { program: ts.createProgram(files, { strict: true, noEmit: true }, host), files };
}

const found = (program: ts.Program, files: readonly string[]): string[] => {
  const checker = program.getTypeChecker();
  return holders(program, files)
    .filter((h) => holdsEntries(checker, h.type, false, new Set()))
    .map((h) => h.where);
};

describe("the check", () => {
  const types = `${ROOT}/fake/types.ts`;
  const head =
    `export interface EntryMatch { value: Uint8Array }\nexport interface EntryAction { name: string }\n` +
    `export interface LedgerEntry { match: EntryMatch }\nexport interface CompiledRow { match: EntryMatch }\n` +
    `export interface FieldMatch { fieldId: number }\nexport type TableAct = { member: number } | { group: number };\n`;
  const cases: { name: string; source: string; found: string[] }[] = [
    {
      name: "a class's map of rows (a copy) is found",
      source: `class C {\n  rows = new Map<number, { match: EntryMatch; entry: number }>();\n}\n`,
      found: ["fake/x.ts:3 rows"],
    },
    {
      name: "a module's array of actions, a private field's set of them, behind an alias",
      source: `type Row = { action: EntryAction };\nconst all: Row[] = [];\nclass D {\n  #s = new Set<Row>();\n}\n`,
      found: ["fake/x.ts:3 all", "fake/x.ts:5 #s"],
    },
    {
      name: "one match held (no collection), the description's rows and ledger entries are not",
      source:
        `class E {\n  one: EntryMatch = { value: new Uint8Array(0) };\n  rows: CompiledRow[] = [];\n` +
        `  placed = new Map<string, LedgerEntry>();\n}\n`,
      found: [],
    },
    {
      name: "P4Runtime's forms of a match and an action kept by key are found too",
      source: `class F {\n  byKey = new Map<string, { match: FieldMatch[]; act: TableAct }>();\n}\n`,
      found: ["fake/x.ts:3 byKey"],
    },
  ];
  // One program for every case (making one is most of the cost): case k's source is fake/xk.ts.
  const sources = Object.fromEntries(
    cases.map((c, k) => [`${ROOT}/fake/x${k}.ts`, `import type * as T from "./types.js";\n${imports(c.source)}`]),
  );
  const { program } = programOf({ [types]: head, ...sources });
  it.each(cases.map((c, k) => ({ ...c, k })))("$name", ({ k, found: want }) => {
    const named = found(program, [`${ROOT}/fake/x${k}.ts`]).map((w) => w.replace(`fake/x${k}.ts`, "fake/x.ts"));
    expect(named).toEqual(want);
  });
});

/** The source with the fake types named through their module (a line is added above it, counted in `found`). */
function imports(source: string): string {
  return source.replace(/\b(EntryMatch|EntryAction|LedgerEntry|CompiledRow|FieldMatch|TableAct)\b/g, "T.$1");
}

describe("the code", () => {
  it("keeps entries' matches and actions only in the ledger and the data plane's tables", () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
        },
      },
    );
    if (config === undefined) throw new Error("no tsconfig.json");
    const src = config.fileNames.filter(
      (f) => f.startsWith(join(ROOT, "src")) && !OWNERS.some((o) => f.startsWith(join(ROOT, o))),
    );
    // A reader that found nothing would pass.
    expect(src.some((f) => f.endsWith("src/p4runtime/device-state.ts"))).toBe(true);
    const program = ts.createProgram(src, { ...config.options, noEmit: true });
    expect(found(program, src)).toEqual([]);
  });
});
