// The reference checks the compiler and the data plane, so it must not share
// their code: src/model/ may take types from the compiled spec (for its
// numbering) and the description, and the drop reasons' names from the wasm
// contract, but no code of src/control, src/wire, assembly/ or the wasm glue.

import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../../src/model/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));

/** Every import of a file: what it imports from where, and whether only types. */
function imports(text: string): { from: string; typeOnly: boolean; names: string }[] {
  return [...text.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)";/gm)].map((m) => {
    const names = m[2] ?? "";
    const values = names
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "" && !n.startsWith("type "));
    return { from: m[3] ?? "", typeOnly: m[1] !== undefined || values.length === 0, names: values.join(", ") };
  });
}

describe("src/model imports", () => {
  it.each(files)("%s uses no compiler, registry or data-plane code", (file) => {
    const text = readFileSync(new URL(file, dir), "utf8");
    expect(text).not.toMatch(/^import\s+(?!type\s+\{|\{)/m); // only named imports, which the check below reads
    const code = imports(text).filter((i) => !i.typeOnly && !i.from.startsWith("./"));
    // The only values from outside: the names of drop reasons, which the results count by.
    expect(code).toEqual(code.length === 0 ? [] : [{ from: "../wasm/abi.js", typeOnly: false, names: "DROP_REASONS" }]);
  });
});
