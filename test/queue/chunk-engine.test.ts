// A queue worker's engine with --updates, without Redis: chunks cut by the coordinator's cut (src/queue/cut.ts) run on
// one ChunkEngine in any order write what each writes on an engine of its own, fresh: an engine past a chunk's updates
// (it ran a later chunk) is opened afresh and brought to them, one behind applies the ones it lacks.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { decodeChunk } from "../../src/queue/chunk-codec.js";
import { ChunkEngine } from "../../src/queue/chunk-engine.js";
import { cutChunks } from "../../src/queue/cut.js";
import { PROTOCOL, type RunSetup, sha256, STRATA_VERSION } from "../../src/queue/protocol.js";
import { openInputs } from "../../src/run/inputs.js";
import { loadUpdates, prepareUpdates, UpdateSchedule } from "../../src/run/updates.js";

const ROOT = new URL("../..", import.meta.url).pathname;

interface Cut {
  readonly payload: Buffer;
  readonly first: number;
  readonly updatesBefore: number;
}

/** The run's setup and its chunks of one packet, as the coordinator makes them. */
async function chunksOf(spec: string, inputs: readonly [string, string][], updates: string) {
  const description = readFileSync(spec, "utf8");
  const compiled = compile(parseSpec(description, spec));
  const endpoints = inputs.map(([endpoint]) => endpoint);
  const engine = Engine.open({ compiled, endpoints });
  const prepared = prepareUpdates(
    loadUpdates(updates),
    compiled,
    engine.endpoints.map((e) => e.text),
  );
  const setup: RunSetup = {
    ...{ protocol: PROTOCOL, version: STRATA_VERSION, description, digest: sha256(description), spec },
    ...{ endpoints: engine.endpoints.map((e) => e.text), trace: true, hopLimit: 64, copyLimit: 64 },
    updates: { list: prepared.list, descriptions: prepared.descriptions },
  };
  const files = inputs.map(([, file]) => join(ROOT, file));
  const read = openInputs(engine.endpoints, files, 64);
  const cuts: Cut[] = [];
  engine.connect();
  const how = { shared: undefined, schedule: new UpdateSchedule(prepared, engine) };
  await cutChunks(read, engine, 1, how, async (c) => {
    cuts.push({ payload: Buffer.from(c.payload ?? Buffer.alloc(0)), first: c.first, updatesBefore: c.updatesBefore });
  });
  engine.disconnect();
  read.close();
  return { setup, cuts };
}

/** What chunk `c` writes on `engine`: its records, trace lines and counters, as plain values. */
function ran(engine: ChunkEngine, c: Cut): unknown {
  const parts = decodeChunk(c.payload);
  const got = engine.run(() => parts, c.first, c.updatesBefore);
  return { ...got, records: got.records.map((r) => ({ ...r, bytes: [...r.bytes] })) };
}

describe("a queue worker's engine with --updates", () => {
  it.each([
    ["a route withdrawn and back", "examples/ip-router/network.yaml", "test/fixtures/updates/ip-router-route.yaml"],
  ])("%s: chunks in any order on one engine write what each writes alone", async (_name, spec, updates) => {
    const example = JSON.parse(readFileSync(join(ROOT, "examples/ip-router/example.json"), "utf8")) as {
      inputs: string[];
    };
    const inputs = example.inputs.map((i): [string, string] => [
      i.slice(0, i.indexOf("=")),
      i.slice(i.indexOf("=") + 1),
    ]);
    const { setup, cuts } = await chunksOf(join(ROOT, spec), inputs, join(ROOT, updates));
    expect(cuts.map((c) => c.updatesBefore)).toEqual([1, 2]);
    const alone = cuts.map((c) => ran(new ChunkEngine(setup), c));
    // The chunks' outputs differ (the first packet is dropped, the route withdrawn; the second delivered): an engine
    // at the wrong updates would show.
    expect(alone[0]).not.toEqual(alone[1]);
    const one = new ChunkEngine(setup);
    for (const k of [1, 0, 1, 0, 0]) expect(ran(one, cuts[k]!), `chunk ${k}`).toEqual(alone[k]);
  });
});
