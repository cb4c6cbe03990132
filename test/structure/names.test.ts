// One name for the per-member link identifier (issue 29): docs/spec.md and the model call it a link identifier —
// an in-link, an out-link — and the data plane's descriptor says inLink and outLink; "port" is a P4 switch's port
// or a transport header's, another thing. The data plane's pipeline and tables name no identifier "port", but
// for those in LEFT, whose users outside assembly/ are being rewritten by others (each says whose). Identifiers
// are read by TypeScript's scanner (not comments or strings); wire/ is left out: its ports are UDP's and TCP's.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const FILES = /^assembly\/(index\.ts|pipeline\/.*\.ts|tables\/.*\.ts)$/;

/** "file: name" for a name the data plane still gives a link identifier as "port", and who renames it. */
const LEFT: readonly { at: RegExp; by: string }[] = [
  // Generated from src/wasm/abi.ts, whose users are in src/control/ and src/engine/.
  { at: /: PORT_(SELF|SHARED|NONE)$/, by: "h-ledger" },
  // The export src/control/install.ts calls.
  { at: /^assembly\/(index|pipeline\/topology)\.ts: memberSetPortLink$/, by: "h-ledger" },
  // A trace event's link identifier, generated from src/wasm/abi.ts and read by src/engine/trace.ts.
  { at: /^assembly\/pipeline\/trace\.ts: (EVENT_PORT|port)$/, by: "the TypeScript side's rename (issue 29)" },
];

/** The identifiers of `source` that say "port" (not export, import or support). */
function portNames(source: string): string[] {
  const s = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source);
  const names = new Set<string>();
  for (let k = s.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = s.scan()) {
    const text = s.getTokenText();
    if (k === ts.SyntaxKind.Identifier && /port/i.test(text) && !/export|import|support/i.test(text)) names.add(text);
  }
  return [...names];
}

describe("the identifier reader", () => {
  it.each([
    { source: "export function f(port: u32, nPorts: i32): void {}", names: ["port", "nPorts"] },
    { source: "// a port\nconst s = 'port';\nimport { x } from './y';\nconst r = DROP_UNSUPPORTED;", names: [] },
  ])("$source", ({ source, names }) => {
    expect(portNames(source)).toEqual(names);
  });
});

describe("the data plane's names", () => {
  const files = readdirSync(join(ROOT, "assembly"), { recursive: true, encoding: "utf8" })
    .map((name) => `assembly/${name}`)
    .filter((f) => FILES.test(f))
    .sort();

  it("call the per-member link identifier a link, not a port", () => {
    expect(files).toContain("assembly/pipeline/topology.ts");
    const named = files.flatMap((f) => portNames(readFileSync(join(ROOT, f), "utf8")).map((n) => `${f}: ${n}`));
    expect(named.filter((n) => !LEFT.some((l) => l.at.test(n)))).toEqual([]);
  });
});
