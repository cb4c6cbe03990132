import { availableParallelism } from "node:os";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";
import { TEST_MS } from "./test/helpers/wait.js";

/**
 * The files that take longest (p4c and simple_switch, property searches, processes started and
 * stopped), longest first. vitest runs the files it has timed before longest first, and the
 * others largest first: on a fresh clone (CI) these small files came last, and the run ended
 * with one worker on them while the other had nothing left. A fresh clone also has no p4c
 * cache: compile.test.ts compiles every exported program (two p4c at a time, which the other P4
 * files then find compiled), the longest file there and a second on a warm cache; beside it
 * docs-bmv2.test.ts, which mostly waits on the sleeps of the doc's shell block while p4c takes
 * the cores. The rest as they took on a warm cache (4e1bf60, 2 cores): 18 s (cuts) down to 3 s (scenarios).
 */
const LONGEST = [
  "test/p4/compile.test.ts",
  "test/p4/docs-bmv2.test.ts",
  "test/p4/bmv2-random.test.ts",
  "test/analysis/cuts.test.ts",
  "test/pipeline/differential.test.ts",
  "test/p4runtime/cli.test.ts",
  "test/serve/live.test.ts",
  "test/view/browser.test.ts",
  "test/p4/bmv2.test.ts",
  "test/queue/faults.test.ts",
  "test/deploy/bmv2.test.ts",
  "test/cli/view-scale.test.ts",
  "test/analysis/dynamic.test.ts",
  "test/deploy/faults.test.ts",
  "test/run/workers.test.ts",
  "test/bench/scenarios.test.ts",
];

// A renamed or removed file would drop out of the order without a word: say so instead.
const root = fileURLToPath(new URL(".", import.meta.url));
const gone = LONGEST.filter((f) => !existsSync(join(root, f)));
if (gone.length > 0) throw new Error(`vitest.config.ts: LONGEST names files that do not exist: ${gone.join(", ")}`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification): number => {
      const i = LONGEST.indexOf(relative(f.project.config.root, f.moduleId));
      return i < 0 ? LONGEST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // fast-check's properties draw fixed cases unless STRATA_FC_SEED says otherwise (test/helpers/fc-seed.ts).
    setupFiles: ["test/helpers/fc-seed.ts"],
    // A limit that catches a hang, not a budget: the tests are budgeted by work (packets, descriptions, steps) and wait
    // for events, and pass on a busy machine (issue 29: scripts/test-under-load.sh), where they take many times longer.
    testTimeout: TEST_MS,
    hookTimeout: TEST_MS,
    pool: "forks",
    // One module graph per worker: the files import the same compiler and data plane, loaded once.
    isolate: false,
    // A worker per core (vitest's default leaves one core to itself): many files spend their time
    // waiting on processes (p4c, simple_switch, strata itself), and the other worker runs meanwhile.
    maxWorkers: availableParallelism(),
    sequence: { sequencer: LongestFirst },
    // The JSON report gives .ci/run its pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
