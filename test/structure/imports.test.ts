// The shape of the code, held: no import circle among the files of assembly/,
// src/, bench/ and bin/ (madge reads src, bench and bin, but not AssemblyScript);
// arrows down — src/ imports neither bench/ nor bin/, src/view not src/cli; the
// table engine in layers — assembly/tables: storage < kinds < indexes < table
// < write, each importing only its own layer and those below, none of them
// the pipeline; and the bench's bound kernels made of the data plane's step
// functions, not of what the steps call. Imports are read by TypeScript's
// pre-processor (import and export … from, import(), side-effect imports; not
// comments or strings), which takes AssemblyScript's decorators in its stride.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** The relative specifiers a source imports, in order. */
function specifiers(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith("."));
}

/** The file among `files` a specifier in `from` names (`x`, `x.ts`, `x.js` for `x.ts`, `x/index.ts`), or undefined. */
function resolve(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const base = join(dirname(from), specifier);
  const candidates = [base, `${base}.ts`, base.replace(/\.js$/, ".ts"), join(base, "index.ts")];
  return candidates.find((c) => files.has(c));
}

/** Import graph: each file (a path relative to the repository) to the files it imports. */
type Graph = Map<string, string[]>;

/** The .ts files below `dirs`, relative to the repository. */
function tsFiles(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(dir, name))
      .sort(),
  );
}

function graphOf(sources: ReadonlyMap<string, string>): Graph {
  const files = new Set(sources.keys());
  const graph: Graph = new Map();
  for (const [file, source] of sources) {
    const targets = specifiers(source).map((s) => resolve(file, s, files));
    graph.set(
      file,
      targets.filter((t): t is string => t !== undefined),
    );
  }
  return graph;
}

function readGraph(dirs: readonly string[]): Graph {
  return graphOf(new Map(tsFiles(dirs).map((f) => [f, readFileSync(join(ROOT, f), "utf8")])));
}

/** Every import circle: one per strongly connected component of two or more files (or a file importing itself), as a
 * closed path. */
function circles(graph: Graph): string[][] {
  // Tarjan's algorithm, iterative (a long chain of imports must not overflow the stack).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { file: string; k: number }[] = [{ file: start, k: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const targets = graph.get(top.file) ?? [];
      if (top.k < targets.length) {
        const to = targets[top.k++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ file: to, k: 0 });
        } else if (onStack.has(to)) {
          low.set(top.file, Math.min(low.get(top.file)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(top.file)!));
      if (low.get(top.file) !== index.get(top.file)) continue;
      const component: string[] = [];
      let file: string;
      do {
        file = stack.pop()!;
        onStack.delete(file);
        component.push(file);
      } while (file !== top.file);
      if (component.length > 1 || targets.includes(top.file)) found.push(pathThrough(graph, new Set(component)));
    }
  }
  return found;
}

/** A closed path through a strongly connected `component` (from its first file by name, back to it): what a reader
 * follows. */
function pathThrough(graph: Graph, component: ReadonlySet<string>): string[] {
  const first = [...component].sort()[0]!;
  // Breadth-first from `first` inside the component, to the first file that imports `first`.
  const cameFrom = new Map<string, string>([[first, first]]);
  const queue = [first];
  for (let q = 0; q < queue.length; q++) {
    const file = queue[q]!;
    for (const to of graph.get(file) ?? []) {
      if (to === first) {
        const path = [first];
        for (let at = file; at !== first; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, first];
      }
      if (component.has(to) && !cameFrom.has(to)) {
        cameFrom.set(to, file);
        queue.push(to);
      }
    }
  }
  return [first, first];
}

/** assembly/tables, bottom up: a file may import files of its own layer and of those below. */
const TABLE_LAYERS: readonly { name: string; files: RegExp }[] = [
  { name: "storage", files: /^assembly\/tables\/(storage|action|keys|hash)\.ts$/ },
  { name: "kinds", files: /^assembly\/tables\/kinds\/[^/]+\.ts$/ },
  { name: "indexes", files: /^assembly\/tables\/indexes\/[^/]+\.ts$/ },
  { name: "table", files: /^assembly\/tables\/table\.ts$/ },
  { name: "write", files: /^assembly\/tables\/write\.ts$/ },
];

function layerOf(file: string): number {
  return TABLE_LAYERS.findIndex((l) => l.files.test(file));
}

/** The table engine's imports that break its layering: upward, out of any layer, or into the pipeline. */
function layerBreaks(graph: Graph): string[] {
  const breaks: string[] = [];
  for (const [file, targets] of graph) {
    if (!file.startsWith("assembly/tables/")) continue;
    if (layerOf(file) < 0) {
      breaks.push(`${file}: in no layer`);
      continue;
    }
    for (const to of targets) {
      if (to.startsWith("assembly/pipeline/")) breaks.push(`${file} → ${to}: the pipeline`);
      else if (to.startsWith("assembly/tables/") && layerOf(to) > layerOf(file)) breaks.push(`${file} → ${to}: upward`);
    }
  }
  return breaks;
}

describe("the import reader", () => {
  const cases: { name: string; source: string; imports: string[] }[] = [
    {
      name: "import and export … from",
      source: `import { a } from "./a";\nexport { b } from "../b.js";\nexport * from "./c";`,
      imports: ["./a", "../b.js", "./c"],
    },
    {
      name: "across lines, after a decorator",
      source: `@inline export function f(): void {}\nimport {\n  x,\n  y,\n} from "./x";`,
      imports: ["./x"],
    },
    {
      name: "type-only, side-effect and dynamic imports",
      source: `import type { T } from "./t.js";\nimport "./side";\nconst m = await import("./later.js");`,
      imports: ["./t.js", "./side", "./later.js"],
    },
    {
      name: "not comments, strings or packages",
      source: `// import a from "./a";\nconst s = 'import b from "./b"';\nimport ts from "typescript";`,
      imports: [],
    },
  ];
  it.each(cases)("$name", ({ source, imports }) => {
    expect(specifiers(source)).toEqual(imports);
  });

  it("resolves a .js specifier, a bare one and a folder to the .ts file", () => {
    const files = new Set(["src/a.ts", "src/b/index.ts", "src/c/d.ts"]);
    expect(["./a.js", "./b", "./c/d"].map((s) => resolve("src/e.ts", s, files))).toEqual([
      "src/a.ts",
      "src/b/index.ts",
      "src/c/d.ts",
    ]);
  });
});

describe("circles", () => {
  const cases: { name: string; edges: [string, string[]][]; circles: string[][] }[] = [
    {
      name: "a chain",
      edges: [
        ["a", ["b"]],
        ["b", ["c"]],
        ["c", []],
      ],
      circles: [],
    },
    {
      name: "a diamond",
      edges: [
        ["a", ["b", "c"]],
        ["b", ["d"]],
        ["c", ["d"]],
        ["d", []],
      ],
      circles: [],
    },
    {
      name: "two files",
      edges: [
        ["a", ["b"]],
        ["b", ["a"]],
      ],
      circles: [["a", "b", "a"]],
    },
    { name: "a file importing itself", edges: [["a", ["a"]]], circles: [["a", "a"]] },
    {
      name: "three files, entered in the middle",
      edges: [
        ["b", ["c"]],
        ["c", ["a"]],
        ["a", ["b"]],
      ],
      circles: [["a", "b", "c", "a"]],
    },
    {
      name: "two circles",
      edges: [
        ["a", ["b"]],
        ["b", ["a", "c"]],
        ["c", ["d"]],
        ["d", ["c"]],
      ],
      circles: [
        ["c", "d", "c"],
        ["a", "b", "a"],
      ],
    },
  ];
  it.each(cases)("$name", ({ edges, circles: expected }) => {
    expect(circles(new Map(edges))).toEqual(expected);
  });
});

/** The imports of files below `from` that reach files below `to`, as "file → target". */
function arrows(graph: Graph, from: string, to: string): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith(from) ? targets.filter((t) => t.startsWith(to)).map((t) => `${file} → ${t}`) : [],
  );
}

describe("the code's imports", () => {
  const graph = readGraph(["assembly", "src", "bench", "bin"]);

  it("has no import circle in assembly/, src/, bench/ or bin/", () => {
    expect(circles(graph).map((c) => c.join(" → "))).toEqual([]);
  });

  // Arrows go down (issue 29): the bench and the bin stand above the code they measure and put together, and the
  // command line above what it shows; what both sides use lives below both (src/trace/, src/time.ts).
  it.each([
    { from: "src/", to: "bench/" },
    { from: "src/", to: "bin/" },
    { from: "bench/", to: "bin/" },
    { from: "src/view/", to: "src/cli/" },
  ])("no file of $from imports from $to", ({ from, to }) => {
    expect(arrows(graph, from, to)).toEqual([]);
  });

  it("reads the arrows it holds to: bin/ imports src/ and bench/, bench/ imports src/", () => {
    // A reader that resolved nothing would pass the test above.
    expect(arrows(graph, "bin/", "src/")).not.toEqual([]);
    expect(arrows(graph, "bin/", "bench/")).not.toEqual([]);
    expect(arrows(graph, "bench/", "src/")).not.toEqual([]);
  });

  it("assembly/tables imports only downward (storage < kinds < indexes < table < write), never the pipeline", () => {
    expect(layerBreaks(graph)).toEqual([]);
  });

  it("the bound kernels take the data plane's steps: they import none of what a step does", () => {
    // A kernel is a list of steps.ts's step functions; the work inside a step (effects, lookups, parse, the tables,
    // the wire) is reached through them only, so no kernel can restate it.
    const kernels = graph.get("assembly/bound/kernels.ts") ?? [];
    expect(kernels).toContain("assembly/pipeline/steps.ts");
    const allowed = /^assembly\/(abi|pipeline\/(steps|run|trace|packet|plan|topology))\.ts$/;
    expect(kernels.filter((f) => !allowed.test(f))).toEqual([]);
  });

  it("reads the table engine's files", () => {
    // A reader that found nothing would pass the tests above.
    const tables = [...graph.keys()].filter((f) => f.startsWith("assembly/tables/"));
    expect(tables).toContain("assembly/tables/table.ts");
    expect(graph.get("assembly/tables/table.ts")).toContain("assembly/tables/storage.ts");
  });
});
