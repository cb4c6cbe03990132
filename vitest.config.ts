import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
    // The JSON report gives .ci/run its pass/fail counts.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
