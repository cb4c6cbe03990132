// Builds strata serve's native port process (native/port-helper.c, Linux only) into
// build/strata-port-helper with the C compiler there is; without one, or where it fails, one note
// and the build goes on: --port then uses cap (src/serve/ports.ts chooses).
import { mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = "build/strata-port-helper";
if (process.platform !== "linux") process.exit(0);
mkdirSync(`${root}build`, { recursive: true });
const cc = process.env.CC ?? "cc";
const r = spawnSync(cc, ["-O2", "-Wall", "-o", out, "native/port-helper.c"], { cwd: root, encoding: "utf8" });
if (r.error !== undefined || r.status !== 0) {
  const why = r.error !== undefined ? r.error.message : (r.stderr.trim().split("\n")[0] ?? `exit ${r.status}`);
  console.error(`strata: note: ${out} not built (${why}): strata serve --port will use cap`);
}
