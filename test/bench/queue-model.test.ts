// docs/scale-out.md's figures and model of N machines are what bench/queue.ts measured: the docs hold the tables
// bench/queue-model.ts makes from bench/queue-measured.json (the bench's --write), and the model's stages are worked
// out again here, by hand, from the measured figures.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { docsTables, MEASURED_FILE, modelInputs, readMeasured, stages } from "../../bench/queue-model.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const DOCS = readFileSync(join(ROOT, "docs/scale-out.md"), "utf8");
const measured = readMeasured(MEASURED_FILE);

describe("docs/scale-out.md from the queue bench's measurement", () => {
  it("the measurement is the bench's: at least 10 M packets, every way run", () => {
    expect(MEASURED_FILE).toBe(join(ROOT, "bench/queue-measured.json"));
    expect(measured.bench.packets).toBeGreaterThanOrEqual(10_000_000);
    expect(measured.bench.rows.map((r) => r.way)).toEqual([
      "one thread",
      "--workers 2",
      "--queue, 2 worker processes",
      "--queue --shared, 2 worker processes",
    ]);
  });

  it.each(docsTables(measured).map((t, k) => [k, t]))("the docs hold table %i as made from it", (_, table) => {
    expect(DOCS).toContain(table);
  });

  const b = measured.bench;
  it.each([
    ["redis", b.perChunk.redis, 2 * (b.perChunk.redis.packetBytes + b.perChunk.redis.outputBytes)],
    ["shared", b.perChunk.shared, 2 * (b.captureBytes / b.chunks + b.perChunk.shared.outputBytes)],
  ] as const)("%s: each stage's chunks/s is the measured cost's inverse", (way, c, bytes) => {
    const m = modelInputs(b, way);
    for (const n of [1, 10, 100]) {
      const s = Object.fromEntries(stages(m, n).map((x) => [x.stage, x.chunksPerS]));
      expect(Object.values(s)).toEqual([
        (n * 1000) / (c.workersMs / 2),
        1000 / c.coordinatorMs,
        1000 / c.redisMs,
        1.25e9 / bytes,
        1.25e8 / bytes,
      ]);
    }
  });
});
