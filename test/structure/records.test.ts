// The table engine's records hold the tables and nothing of their users (issue 29): every field of Table and
// Entry (assembly/tables/storage.ts) is set somewhere in assembly/tables/. A field set only by the pipeline is
// the pipeline's state (a cache of its plans, say) and is kept beside the table, by table id, where the
// pipeline owns it. Fields are read from the class by TypeScript's parser; a field is set where a file writes
// `x.field =` (or +=, -=, ++, --).

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** The fields of class `name` in `source`. */
function fieldsOf(source: string, name: string): string[] {
  const file = ts.createSourceFile("record.ts", source, ts.ScriptTarget.Latest);
  const record = file.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name,
  );
  return (record?.members ?? [])
    .filter(ts.isPropertyDeclaration)
    .map((m) => m.name?.getText(file) ?? "")
    .sort();
}

/** The fields of `fields` that `source` sets. */
function setIn(source: string, fields: readonly string[]): string[] {
  return fields.filter((f) => new RegExp(`\\.${f}\\s*(=[^=]|\\+=|-=|\\+\\+|--)`).test(source));
}

/** The sources of the .ts files below `dir` (relative to the repository). */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => readFileSync(join(ROOT, dir, name), "utf8"));
}

describe("the field reader", () => {
  const cases: { name: string; source: string; fields: string[]; set: string[] }[] = [
    {
      name: "a class's fields, not its methods or another class's",
      source:
        "@unmanaged\nexport class T {\n  a: i32;\n  /** b */\n  b: usize;\n  f(): void {}\n}\nclass U {\n  c: i32;\n}",
      fields: ["a", "b"],
      set: [],
    },
    {
      name: "set by =, += and ++, not compared",
      source: "class T {\n  a: i32;\n  b: i32;\n  c: i32;\n  d: i32;\n}\nt.a = 1;\nt.b += 2;\nt.c++;\nif (t.d == 0) {}",
      fields: ["a", "b", "c", "d"],
      set: ["a", "b", "c"],
    },
  ];
  it.each(cases)("$name", ({ source, fields, set }) => {
    expect(fieldsOf(source, "T")).toEqual(fields);
    expect(setIn(source, fields)).toEqual(set);
  });
});

describe("the table engine's records", () => {
  const storage = readFileSync(join(ROOT, "assembly/tables/storage.ts"), "utf8");
  const tables = sources("assembly/tables");

  it.each(["Table", "Entry"])("every field of %s is set by assembly/tables/", (record) => {
    const fields = fieldsOf(storage, record);
    expect(fields.length).toBeGreaterThan(5); // the reader found the record
    const set = new Set(tables.flatMap((s) => setIn(s, fields)));
    expect(fields.filter((f) => !set.has(f))).toEqual([]);
  });
});
