// The page's script joined from the modules of src/view/client/: each after what it imports, as
// a browser runs modules, once, with no import or export left; and the real modules, which then
// share one scope, declare no name twice at their top level.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { clientScript, joinModules } from "../../src/view/client-script.js";

const COMPILED = join(import.meta.dirname, "..", "..", "dist", "src", "view", "client");

describe("joinModules", () => {
  const cases: { name: string; modules: Record<string, string>; joined: string }[] = [
    {
      name: "a module after the modules it imports, in the order of its imports",
      modules: {
        "main.js": `import { b } from "./b.js";\nimport { a } from "./a.js";\nmain(a, b);\n`,
        "a.js": `export const a = 1;\n`,
        "b.js": `import { a } from "./a.js";\nexport function b() {}\n`,
      },
      joined: `const a = 1;\n\nfunction b() {}\n\nmain(a, b);\n`,
    },
    {
      name: "an import across lines, and one for its effects only",
      modules: {
        "main.js": `import {\n    x,\n    y,\n} from "./x.js";\nimport "./effects.js";\nuse(x, y);\n`,
        "x.js": `export let x = 0;\nexport async function y() {}\n`,
        "effects.js": `listen();\n`,
      },
      joined: `let x = 0;\nasync function y() {}\n\nlisten();\n\nuse(x, y);\n`,
    },
    {
      name: "a module imported twice is there once",
      modules: {
        "main.js": `import "./a.js";\nimport "./b.js";\n`,
        "a.js": `import "./c.js";\na();\n`,
        "b.js": `import "./c.js";\nb();\n`,
        "c.js": `export class C {}\n`,
      },
      joined: `class C {}\n\na();\n\nb();\n\n`,
    },
  ];
  it.each(cases)("$name", ({ modules, joined }) => {
    expect(joinModules("main.js", (name) => modules[name] ?? "")).toBe(joined);
  });

  it("refuses an import that is not of the client's own folder", () => {
    const modules: Record<string, string> = { "main.js": `import { readFileSync } from "node:fs";\n` };
    expect(() => joinModules("main.js", (name) => modules[name] ?? "")).toThrow(/main.js imports node:fs/);
  });
});

/** The names a compiled module declares at its top level. */
function topLevelNames(source: string): string[] {
  const file = ts.createSourceFile("m.js", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  return file.statements.flatMap((s) => {
    if (ts.isVariableStatement(s)) return s.declarationList.declarations.map((d) => d.name.getText(file));
    if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name !== undefined) return [s.name.text];
    return [];
  });
}

describe("the page's script", () => {
  it("is every module of src/view/client/, with no import or export left", () => {
    const script = clientScript();
    const file = ts.createSourceFile("page.js", script, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
    const modular = file.statements.filter(
      (s) =>
        ts.isImportDeclaration(s) ||
        ts.isExportDeclaration(s) ||
        ts.getModifiers(s as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true,
    );
    expect(modular.map((s) => s.getText(file).slice(0, 60))).toEqual([]);
    const modules = readdirSync(COMPILED).filter((f) => f.endsWith(".js"));
    expect(modules).toContain("main.js");
    for (const m of modules) expect(script).toContain(topLevelNames(readFileSync(join(COMPILED, m), "utf8"))[0] ?? "");
  });

  it("declares each top-level name once across the modules (they share one scope)", () => {
    const names = readdirSync(COMPILED)
      .filter((f) => f.endsWith(".js"))
      .flatMap((m) => topLevelNames(readFileSync(join(COMPILED, m), "utf8")).map((n) => ({ n, m })));
    const twice = names.filter((x, i) => names.findIndex((y) => y.n === x.n) !== i);
    expect(twice.map((x) => `${x.n} (${x.m})`)).toEqual([]);
  });
});
