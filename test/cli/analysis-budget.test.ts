// What strata analyze and strata check show of a long analysis: a progress bar
// on stderr when it is a terminal, only once the work has gone on for a while,
// naming the stage it is in (src/cli/analysis-budget.ts). The clock is the
// test's.

import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import type { Progress } from "../../src/analysis/budget.js";
import { analysisBudget, progressBar } from "../../src/cli/analysis-budget.js";
import { memoryIo } from "../../src/cli/io.js";

/** A terminal that keeps what is written to it. */
function terminal(): { stream: NodeJS.WritableStream; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
  let text = "";
  stream.on("data", (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
}

const BUILD: Progress = { stage: "building the ipv4 header classes", done: 10, total: 34, unit: "row patterns" };
const WALK: Progress = { stage: "walking reachable in network lan", done: 5, total: 200, unit: "header classes" };

const CASES: readonly { name: string; at: readonly [number, Progress][]; shows: readonly string[] }[] = [
  { name: "quick work: no bar", at: [[100, BUILD]], shows: [] },
  {
    name: "past half a second: the stage, how far, of what",
    at: [
      [100, BUILD],
      [600, BUILD],
      [700, WALK],
    ],
    shows: [
      "building the ipv4 header classes [",
      "] 10/34 row patterns",
      "walking reachable in network lan [",
      "] 5/200",
    ],
  },
];

describe("the analysis's progress bar", () => {
  test.each(CASES)("$name", async ({ at, shows }) => {
    const t = terminal();
    let now = 0;
    const bar = progressBar(t.stream, () => now);
    for (const [ms, p] of at) {
      now = ms;
      bar.show(p);
    }
    bar.stop();
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const s of shows) expect(t.text()).toContain(s);
    if (shows.length === 0) expect(t.text()).toBe("");
  });

  test("stderr not a terminal: no bar, nothing written", () => {
    const t = terminal();
    const { budget, done } = analysisBudget({ maxClasses: 0, timeLimit: 0 }, memoryIo(), t.stream);
    budget.stage(BUILD.stage, BUILD.total, BUILD.unit);
    done();
    expect(t.text()).toBe("");
  });
});
