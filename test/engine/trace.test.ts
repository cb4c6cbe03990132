// TraceWriter: a line is JSON.stringify of the packet's head and its steps,
// and never longer than TRACE_LINE_MAX — a packet with more steps keeps the
// first ones and counts the rest in "cut", which strata trace reads back.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { checkTraceLine, TRACE_LINE_MAX, TraceWriter } from "../../src/engine/trace.js";
import { STAGES, TRACE_KINDS } from "../../src/wasm/abi.js";
import type { InputBatch, TraceEvent } from "../../src/wasm/runner.js";

const root = new URL("../..", import.meta.url).pathname;
const compiled = compile(loadSpec(join(root, "examples/hub-and-spoke/network.yaml")));
const member = compiled.members.findIndex((m) => m.qualified === "lan.h2");

const batch: InputBatch = {
  data: new Uint8Array(0),
  count: 2,
  offset: new Uint32Array(2),
  capLen: new Uint32Array([42, 60]),
  origLen: new Uint32Array([42, 60]),
  tsSec: new Float64Array([1750000000, 1750000001]),
  tsNsec: new Uint32Array([1000000, 0]),
  endpoint: 0,
};

/** A delivery of packet `packet`, copy `copy`, at lan.h2. */
function deliver(packet: number, copy: number): TraceEvent {
  return {
    kind: TRACE_KINDS.indexOf("deliver"),
    stage: STAGES.indexOf("deliver"),
    action: 0,
    reason: 0,
    packet,
    copy,
    member,
    row: -1,
    ident: 0,
    link: -1,
    arg: 0,
  };
}

/** The lines a writer gives for `events`. */
function write(
  events: Iterable<TraceEvent>,
  lineMax?: number,
  endpoint = "lan:h1.1",
): { packet: number; text: string }[] {
  const lines: { packet: number; text: string }[] = [];
  const w = new TraceWriter({ line: (packet, text) => lines.push({ packet, text }) }, compiled, new Map(), lineMax);
  w.startBatch(10, batch, [endpoint]);
  for (const e of events) w.event(e);
  w.close();
  return lines;
}

describe("TraceWriter", () => {
  it("writes a packet's line as JSON.stringify of its head and steps", () => {
    const lines = write([deliver(10, 0), deliver(10, 1), deliver(11, 0)]);
    const step = (copy: number): object => ({ copy, step: "deliver", member: "lan.h2" });
    expect(lines).toEqual([
      {
        packet: 10,
        text:
          JSON.stringify({
            packet: 10,
            endpoint: "lan:h1.1",
            tsNs: "1750000000001000000",
            len: 42,
            steps: [step(0), step(1)],
          }) + "\n",
      },
      {
        packet: 11,
        text:
          JSON.stringify({ packet: 11, endpoint: "lan:h1.1", tsNs: "1750000001000000000", len: 60, steps: [step(0)] }) +
          "\n",
      },
    ]);
  });

  // A step here is 46 bytes and its comma; a head about 90, and 32 kept for the line's end.
  it.each([
    { name: "steps that fit", lineMax: 4096, steps: 50, cut: false },
    { name: "steps past the limit", lineMax: 4096, steps: 200, cut: true },
    { name: "steps past the limit, measured as they come", lineMax: 100_000, steps: 10_000, cut: true },
    { name: "the default limit, far from it", lineMax: undefined, steps: 10_000, cut: false },
    {
      name: "a head of 2-byte characters: cut by bytes, not characters",
      lineMax: 4096,
      steps: 80,
      cut: true,
      endpoint: "é".repeat(600),
    },
  ])("$name", ({ lineMax, steps, cut, endpoint }) => {
    const events = Array.from({ length: steps }, (_, k) => deliver(10, k));
    const lines = write([...events, deliver(11, 0)], lineMax, endpoint);
    expect(lines.map((l) => l.packet)).toEqual([10, 11]);
    const text = lines[0]?.text ?? "";
    const value = JSON.parse(text) as { steps: unknown[]; cut?: number };
    expect(checkTraceLine(value).ok).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual((lineMax ?? TRACE_LINE_MAX) + 1);
    expect(value.steps.length + (value.cut ?? 0)).toBe(steps);
    expect(value.cut !== undefined).toBe(cut);
    if (cut) expect(Buffer.byteLength(text)).toBeGreaterThan((lineMax ?? 0) - 200); // the room is used
    expect(JSON.parse(lines[1]?.text ?? "")).not.toHaveProperty("cut");
  });
});

describe("strata trace: a line that was cut", () => {
  it("says how many steps were not kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-trace-"));
    try {
      const line = {
        packet: 0,
        endpoint: "lan:h1.1",
        tsNs: "1750000000001000000",
        len: 42,
        steps: [{ copy: 0, step: "deliver", member: "lan.h2" }],
        cut: 5,
      };
      writeFileSync(join(dir, "trace.jsonl"), `${JSON.stringify(line)}\n`);
      for (const [args, shown] of [
        [
          [],
          "packet 0  lan:h1.1  2025-06-15T15:06:40.001000000Z  42 bytes  " +
            "delivered to lan.h2; 5 more steps not kept (the line reached 64 MiB)\n",
        ],
        [
          ["--packet", "0"],
          "packet 0  lan:h1.1  2025-06-15T15:06:40.001000000Z  42 bytes\n  [0] " +
            "deliver  to lan.h2\n  → delivered to lan.h2; 5 more steps not kept " +
            "(the line reached 64 MiB)\n",
        ],
      ] as const) {
        const io = memoryIo();
        expect(await main(["trace", dir, ...args], io)).toBe(0);
        expect(io.stdout.text).toBe(shown);
      }
      writeFileSync(join(dir, "trace.jsonl"), `${JSON.stringify({ ...line, cut: -1 })}\n`);
      const io = memoryIo();
      expect(await main(["trace", dir], io)).toBe(2);
      expect(io.stderr.text).toMatch(/line 1: cut must be a count of steps, got -1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
