import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
    // One module graph per worker: the files import the same compiler and data plane, loaded once.
    isolate: false,
    // A worker per core (vitest's default leaves one core to itself): many files spend their time
    // waiting on processes (p4c, simple_switch, strata itself), and the other worker runs meanwhile.
    maxWorkers: availableParallelism(),
    // The JSON report gives .ci/run its pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
