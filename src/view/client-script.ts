// The page's script: the modules of ./client/ as tsc compiled them (dist/src/view/client/), joined
// into one. A page opened from disk cannot load modules from files beside it, so it carries one
// script: each module comes after the modules it imports, in the order a browser runs modules,
// with the imports between them and the word `export` taken out. The modules then share one
// scope, so a name declared at the top of one is declared at the top of no other
// (test/view/client-script.test.ts holds that).

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** An import statement of compiled JavaScript (across lines too), and the module it names. */
const IMPORT = /^import\s+(?:[^;]*?\s+from\s+)?"([^"]+)";[ \t]*\n?/gm;
const EXPORT = /^export (?=(?:async )?function|const|let|class)/gm;

/** The page's script: ./client/main.ts and what it imports, compiled and joined; found from src/ in tests too. */
export function clientScript(): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.includes("/dist/")
    ? here.slice(0, here.lastIndexOf("/dist/"))
    : here.slice(0, here.lastIndexOf("/src/"));
  const dir = `${root}/dist/src/view/client`;
  if (!existsSync(`${dir}/main.js`))
    throw new Error(`${dir}/main.js is missing: build strata first (npm run build:ts)`);
  return joinModules("main.js", (name) => readFileSync(`${dir}/${name}`, "utf8"))
    .replace(/^\/\/# sourceMappingURL=.*$/gm, "")
    .replace(/<\/script/gi, "<\\/script");
}

/**
 * The modules `entry` imports, each once and after those it imports (depth first, in the order
 * of its imports, as a browser evaluates them), then `entry`; imports and `export`s taken out.
 * Modules are named as they are imported ("./x.js" is `x.js`) and all in one folder.
 */
export function joinModules(entry: string, read: (name: string) => string): string {
  const joined: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const source = read(name);
    for (const [, specifier = ""] of source.matchAll(IMPORT)) {
      if (!/^\.\/[\w-]+\.js$/.test(specifier))
        throw new Error(`${name} imports ${specifier}: not a module of its own folder`);
      visit(specifier.slice(2));
    }
    joined.push(source.replace(IMPORT, "").replace(EXPORT, ""));
  };
  visit(entry);
  return joined.join("\n");
}
