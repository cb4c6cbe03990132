import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
    // One module graph per worker: the files import the same compiler and data plane, loaded once.
    isolate: false,
    // The JSON report gives .ci/run its pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
