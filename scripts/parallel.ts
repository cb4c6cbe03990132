// `node dist/scripts/parallel.js NAME...` runs the npm scripts NAME... side by side, as many at a
// time as there are cores, in the order given (longest first packs them best): the three wasm
// builds, and `npm test`'s checks before the tests (typecheck, circles, format), each one process
// on one core. Each script's output is printed whole when it ends, so outputs do not interleave;
// the exit code is 1 when any script failed, after all have ended. With --skip-unchanged, a script
// whose last passing run saw the same inputs is not run again (scripts/unchanged.ts).

import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { passed, readsNow, unchanged } from "./unchanged.js";

interface Ended {
  readonly name: string;
  readonly status: number;
  readonly output: string;
}

function runScript(name: string): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "-s", name], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (output += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (output += s));
    const end = (status: number, more = ""): void => resolve({ name, status, output: output + more });
    child.on("error", (err) => end(1, `${err.message}\n`));
    child.on("close", (status) => end(status ?? 1));
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const skip = argv.includes("--skip-unchanged");
  const names = argv.filter((a) => a !== "--skip-unchanged");
  const queue = [...names];
  const ended: Ended[] = [];
  const lane = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const reads = skip ? readsNow(name) : undefined;
      if (unchanged(name, reads)) {
        console.log(`${name}: passed before on the same inputs (scripts/unchanged.ts), not run again`);
        continue;
      }
      const e = await runScript(name);
      if (e.status === 0) passed(name, reads);
      process.stdout.write(e.output);
      if (e.status !== 0) console.error(`parallel: npm run ${name} failed (exit ${e.status})`);
      ended.push(e);
    }
  };
  await Promise.all(Array.from({ length: Math.min(names.length, Math.max(1, availableParallelism())) }, lane));
  return ended.every((e) => e.status === 0) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`parallel: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
