// What `npm run build:ts` compiles into dist/: the program tsconfig.build.json
// resolves, imports followed. Test code must not ship, not even pulled in by
// an import from bench/ or src/.

import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;
const tsc = join(root, "node_modules/typescript/bin/tsc");
const listed = execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--listFilesOnly"], {
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f.startsWith(root))
  .map((f) => f.slice(root.length));

describe("the build's files", () => {
  it.each([
    { folder: "test/", built: false },
    { folder: "vitest.config.ts", built: false },
    { folder: "src/model/", built: true },
    { folder: "bench/", built: true },
  ])("$folder built: $built", ({ folder, built }) => {
    const hits = listed.filter((f) => f.startsWith(folder));
    if (built) expect(hits).not.toEqual([]);
    else expect(hits).toEqual([]);
  });
});
