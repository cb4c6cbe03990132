// One name for the per-member link identifier (issue 29): docs/spec.md and the model call it a link identifier —
// an in-link, an out-link — and the data plane's descriptor says inLink and outLink; "port" is a P4 switch's port,
// a transport header's, a live interface's (strata serve --port) or a worker's message port: another thing. The data
// plane's pipeline and tables, and the TypeScript that compiles, installs, traces and analyses what it runs, name no
// identifier "port" but the transport ports and live ports in NOT_LINKS, and those in LEFT, being rewritten by others
// (each says whose). Identifiers are read by TypeScript's scanner (not comments or strings); wire/ is left out.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const FILES = [
  /^assembly\/(index\.ts|pipeline\/.*\.ts|tables\/.*\.ts)$/,
  /^src\/(analysis|control|description|engine|model|trace|wasm)\/.*\.ts$/,
];

/** "file: name" for names that say "port" and mean one: a transport header's, or strata serve's live ports. */
const NOT_LINKS: readonly RegExp[] = [
  /^src\/(model\/headers|analysis\/pattern-nodes)\.ts: (PORT_PROTOCOLS|sport|dport|ports)$/,
  /^src\/engine\/(engine|summary)\.ts: (PortSummary|#ports|ports|port|reportPorts)$/,
  // A worker thread's message ports.
  /^src\/engine\/file-writer(-thread)?\.ts: (MessagePort|receiveMessageOnPort|port|port1|port2)$/,
];

/** "file: name" for a name that still gives a link identifier as "port", and who renames it. */
const LEFT: readonly { at: RegExp; by: string }[] = [];

/** The identifiers of `source` that say "port" (not export, import, support, report or transport). */
function portNames(source: string): string[] {
  const s = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source);
  const names = new Set<string>();
  for (let k = s.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = s.scan()) {
    const text = s.getTokenText();
    if (k === ts.SyntaxKind.Identifier && /port/i.test(text) && !/export|import|support|report|transport/i.test(text))
      names.add(text);
  }
  return [...names];
}

describe("the identifier reader", () => {
  it.each([
    { source: "export function f(port: u32, nPorts: i32): void {}", names: ["port", "nPorts"] },
    {
      source: "// a port\nconst s = 'port';\nimport { x } from './y';\nconst r = DROP_UNSUPPORTED;\nreport(transport);",
      names: [],
    },
  ])("$source", ({ source, names }) => {
    expect(portNames(source)).toEqual(names);
  });
});

describe("the names of the data plane and of the code around it", () => {
  const files = ["assembly", "src"]
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((n) => `${dir}/${n}`))
    .filter((f) => FILES.some((r) => r.test(f)))
    .sort();
  const named = files.flatMap((f) => portNames(readFileSync(join(ROOT, f), "utf8")).map((n) => `${f}: ${n}`));

  it("reads both sides", () => {
    expect(files).toEqual(expect.arrayContaining(["assembly/pipeline/topology.ts", "src/control/compiled.ts"]));
    expect(named).toContain("src/engine/summary.ts: PortSummary");
  });

  it("call the per-member link identifier a link, not a port", () => {
    const left = named.filter((n) => !NOT_LINKS.some((r) => r.test(n)) && !LEFT.some((l) => l.at.test(n)));
    expect(left).toEqual([]);
  });

  it("leave in LEFT only what is still to be renamed", () => {
    expect(LEFT.filter((l) => !named.some((n) => l.at.test(n))).map((l) => `${String(l.at)} (${l.by})`)).toEqual([]);
  });
});
