// `npm run format` formats every TypeScript file with prettier (.prettierrc.json: 120 columns);
// `npm run format -- --check` (run by `npm test`) lists the files that are not formatted and exits 1.
// Both also list, as FILE:LINE, every line over 120 characters that prettier cannot break (a long
// string, a template, a regular expression), and exit 1 while there is one: break it by hand.
// A file whose first line starts `// GENERATED` is left as its generator wrote it.
//
// AssemblyScript puts decorators where TypeScript allows none (`@inline export function`), so
// prettier cannot parse assembly/ as it is: each such decorator is turned into a comment of its
// own, formatted, and turned back.
//
// What prettier found formatted is remembered in dist/.format-cache: a hash a line, of the text with
// everything else that decides prettier's answer (its version, the file's options, whether it is
// assembly/, this script's own source). A file whose hash is there is not formatted again: its text is
// what prettier would write. A fresh clone has no cache, and formats everything.

import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
const FOLDERS = ["src", "assembly", "bench", "bin", "scripts", "test"];
const SKIP = new Set(["node_modules", "dist", "build", "fixtures"]);
const MAX_COLUMNS = 120;
const CACHE = join(ROOT, "dist", ".format-cache");
const SCRIPT = readFileSync(fileURLToPath(import.meta.url), "utf8");

/** Every .ts file under the folders, in a stable order. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      if (SKIP.has(e.name)) return [];
      const path = join(dir, e.name);
      if (e.isDirectory()) return tsFiles(path);
      return e.name.endsWith(".ts") ? [path] : [];
    });
}

// `@inline ` before a declaration TypeScript does not let decorators precede.
const AS_DECORATOR = new RegExp(
  [
    String.raw`^([ \t]*)@(\w+(?:\([^)\n]*\))?)[ \t]+`,
    String.raw`(?=(?:export[ \t]+)?(?:declare[ \t]+)?(?:function|const|let|var|namespace|enum)\b)`,
  ].join(""),
  "gm",
);
const AS_DECORATOR_COMMENT = /\/\*@(\w+(?:\([^)\n]*\))?)@\*\/ /g;

/** What decides prettier's answer for a file besides its text: its version, this script, the file's options. */
async function settings(path: string): Promise<string> {
  return JSON.stringify([prettier.version, SCRIPT, await prettier.resolveConfig(path), isAssembly(path)]);
}

/** The cache's key of a file's text under `settings`. */
const cacheKey = (settings: string, text: string): string =>
  createHash("sha256").update(settings).update("\0").update(text).digest("hex");

/** The keys of the texts found formatted before (none without a cache). */
function readCache(): Set<string> {
  try {
    return new Set(
      readFileSync(CACHE, "utf8")
        .split("\n")
        .filter((k) => k !== ""),
    );
  } catch {
    return new Set();
  }
}

/** Keeps `keys` as the cache: written whole and renamed into place, so that a reader sees one cache or the other. */
function writeCache(keys: ReadonlySet<string>): void {
  mkdirSync(dirname(CACHE), { recursive: true });
  const temporary = `${CACHE}.${process.pid}`;
  writeFileSync(temporary, [...keys].join("\n") + "\n");
  renameSync(temporary, CACHE);
}

const isAssembly = (path: string): boolean => path.includes(`${ROOT}/assembly/`);

async function formatted(path: string, text: string): Promise<string> {
  const options = { ...(await prettier.resolveConfig(path)), filepath: path };
  if (!isAssembly(path)) return prettier.format(text, options);
  const hidden = text.replace(AS_DECORATOR, "$1/*@$2@*/ ");
  return (await prettier.format(hidden, options)).replace(AS_DECORATOR_COMMENT, "@$1 ");
}

/** Lines longer than the limit, as `file:line: N characters, over 120`. */
function longLines(path: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, i) =>
      line.length > MAX_COLUMNS
        ? [`${relative(ROOT, path)}:${i + 1}: ${line.length} characters, over ${MAX_COLUMNS}`]
        : [],
    );
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes("--check");
  const unformatted: string[] = [];
  const long: string[] = [];
  const known = readCache();
  const found = new Set<string>();
  for (const path of FOLDERS.flatMap((f) => tsFiles(join(ROOT, f)))) {
    const text = readFileSync(path, "utf8");
    if (text.startsWith("// GENERATED")) continue; // written by a generator, in its own layout
    const key = cacheKey(await settings(path), text);
    const out = known.has(key) ? text : await formatted(path, text);
    if (out === text) found.add(key);
    if (out !== text) {
      if (check) unformatted.push(relative(ROOT, path));
      else writeFileSync(path, out);
    }
    long.push(...longLines(path, out));
  }
  if (found.size !== known.size || [...found].some((k) => !known.has(k))) writeCache(found);
  for (const f of unformatted) console.error(`not formatted: ${f} (npm run format)`);
  for (const l of long) console.error(l);
  if (long.length > 0)
    console.error(
      `format: ${long.length} ${long.length === 1 ? "line" : "lines"} over ${MAX_COLUMNS} characters ` +
        "prettier cannot break: break them by hand",
    );
  return unformatted.length === 0 && long.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`format: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
