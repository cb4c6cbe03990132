// The P4Runtime server's own speed, as a controller sees it: a gRPC client in
// this process against strata's server (plain text on loopback) over a
// EngineEmulation.local of the IP router, whose `ip.r` forward table (LPM) is made to
// hold 16,384 entries (the server starts it empty). The requests are encoded
// once, in set-up, and Read responses are taken as bytes (decoded once, to
// check them), so what is timed is the server and gRPC, not this client's
// protobuf code.

import * as grpc from "@grpc/grpc-js";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { exportP4 } from "../src/p4/export.js";
import { EngineEmulation } from "../src/p4runtime/emulation.js";
import { protoRoot } from "../src/p4runtime/definitions.js";
import { P4RuntimeServer } from "../src/p4runtime/server.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median, quantile } from "./stats.js";

/** Entries in the table while single writes and reads are timed. */
const ENTRIES = 10_000;
const BATCH = 1_000;
const WARM_ROUNDS = 2;
const TIMED_ROUNDS = 3;
const SINGLE_WRITES = 1_000;
const READS_ALL = 20;
const READS_ONE = 1_000;

/** examples/ip-router with room for 16,384 routes in ip.r's forward table (its one row is not installed: the server
 * starts empty). */
export function routesSpec(): string {
  return `networks:
  lanA:
    header: ethernet
    members:
      h1: { name: "02:00:00:00:0a:01" }
      r:  { name: "02:00:00:00:0a:fe", role: infra }
    links: [ { from: h1.1, to: r.1, mode: two-way } ]
  lanB:
    header: ethernet
    members:
      h2: { name: "02:00:00:00:0b:02" }
      r:  { name: "02:00:00:00:0b:fe", role: infra }
    links: [ { from: r.1, to: h2.1, mode: two-way } ]
  ip:
    header: ipv4
    ttl: decrement
    members:
      h1: { name: 10.0.1.1 }
      r:  { name: 10.0.1.254, role: infra }
      h2: { name: 10.0.2.2 }
    links:
      - { from: h1.1, to: r.1, mode: two-way }
      - { from: r.2, to: h2.1, mode: two-way }
    tables:
      r:
        forward: { kind: lpm, capacity: 16384, rows: [ { match: { dst: 10.255.0.0/16 }, out: 2 } ] }
`;
}

const SOURCE = "bench-p4runtime.yaml";

type M = Record<string, unknown>;

interface Setup {
  server: P4RuntimeServer;
  client: grpc.Client;
  stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  deviceId: number;
  tableId: number;
  actionId: number;
}

/** Route `i` (0 ≤ i < 65,536): 10.(i >> 8).(i & 255).0/24 out on link 2. */
function route(s: Setup, i: number): M {
  return {
    tableEntry: {
      tableId: s.tableId,
      match: [{ fieldId: 1, lpm: { value: Buffer.from([10, (i >>> 8) & 0xff, i & 0xff, 0]), prefixLen: 24 } }],
      action: { action: { actionId: s.actionId, params: [{ paramId: 1, value: Buffer.from([2]) }] } },
    },
  };
}

function encode(type: string, message: M): Buffer {
  const t = protoRoot().lookupType(type);
  return Buffer.from(t.encode(t.fromObject(message)).finish());
}

const writeRequest = (s: Setup, updates: M[]): Buffer =>
  encode("p4.v1.WriteRequest", { deviceId: s.deviceId, electionId: { high: 0, low: 1 }, updates });

function unary(s: Setup, method: string, request: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    s.client.makeUnaryRequest(
      `/p4.v1.P4Runtime/${method}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      request,
      (err, res) =>
        err === null || err === undefined
          ? resolve(res ?? Buffer.alloc(0))
          : reject(new Error(`${method}: ${err.details}`)),
    );
  });
}

/** A Read's response messages, as bytes. */
function read(s: Setup, request: Buffer): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    const call = s.client.makeServerStreamRequest(
      "/p4.v1.P4Runtime/Read",
      (b: Buffer) => b,
      (b: Buffer) => b,
      request,
    );
    call.on("data", (b: Buffer) => got.push(b));
    call.on("error", reject);
    call.on("end", () => resolve(got));
  });
}

const entitiesIn = (responses: readonly Buffer[]): M[] =>
  responses.flatMap(
    (b) => (protoRoot().lookupType("p4.v1.ReadResponse").decode(b) as unknown as { entities: M[] }).entities ?? [],
  );

async function start(): Promise<Setup> {
  const compiled = compile(parseSpec(routesSpec(), SOURCE));
  const ex = exportP4(compiled, SOURCE).find((e) => e.manifest.machine === "r");
  if (ex === undefined) throw new Error("no machine r");
  const info = JSON.parse(String(ex.files["p4info.json"])) as {
    tables: { preamble: { id: number; alias: string } }[];
    actions: { preamble: { id: number; alias: string } }[];
  };
  const tableId = info.tables.find((t) => t.preamble.alias === "ip_r_forward")?.preamble.id ?? 0;
  const actionId = info.actions.find((a) => a.preamble.alias === "forward_out")?.preamble.id ?? 0;
  const server = await P4RuntimeServer.start(EngineEmulation.local(compiled), {
    address: "127.0.0.1:0",
    empty: true,
    warn: () => undefined,
  });
  const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
  });
  const stream = client.makeBidiStreamRequest(
    "/p4.v1.P4Runtime/StreamChannel",
    (b: Buffer) => b,
    (b: Buffer) => b,
  );
  const s: Setup = { server, client, stream, deviceId: ex.manifest.deviceId, tableId, actionId };
  await new Promise<void>((resolve, reject) => {
    stream.once("data", () => resolve());
    stream.once("error", reject);
    stream.write(
      encode("p4.v1.StreamMessageRequest", { arbitration: { deviceId: s.deviceId, electionId: { high: 0, low: 1 } } }),
    );
  });
  return s;
}

async function stop(s: Setup): Promise<void> {
  s.stream.end();
  s.client.close();
  await s.server.close(100);
}

async function figures(): Promise<Figure[]> {
  const s = await start();
  try {
    const { rates, cpuRates } = await batchedWrites(s);
    const single = await singleWrites(s);
    const all = await readsOfAll(s);
    const one = await readsOfOne(s);
    return [
      { name: "write one entry, p50", value: median(single), unit: "ms", goal: { value: 1, better: "lower" } },
      { name: "write one entry, p99", value: quantile(single, 0.99), unit: "ms" },
      {
        name: `write batches of ${BATCH} (median of ${TIMED_ROUNDS})`,
        value: median(rates),
        unit: "entries/s",
        goal: { value: 50_000, better: "higher" },
      },
      // The same per second of this process's CPU (server, client and V8's threads): what other processes on the
      // machine do not change.
      { name: `write batches of ${BATCH}, per CPU second`, value: median(cpuRates), unit: "entries/s" },
      { name: `read ${ENTRIES} entries`, value: median(all), unit: "ms", goal: { value: 50, better: "lower" } },
      {
        name: `read one entry by key among ${ENTRIES}`,
        value: median(one),
        unit: "ms",
        goal: { value: 1, better: "lower" },
      },
    ];
  } finally {
    await stop(s);
  }
}

/**
 * Batched writes: ENTRIES routes in batches of BATCH into the empty table, and deleted again; WARM_ROUNDS untimed (a
 * switch's agent runs warm), then TIMED_ROUNDS timed (the inserts), the last one left in place. Entries per second of
 * each timed round, and per second of this process's CPU.
 */
async function batchedWrites(s: Setup): Promise<{ rates: number[]; cpuRates: number[] }> {
  const batches = (type: string): Buffer[] =>
    Array.from({ length: ENTRIES / BATCH }, (_, b) =>
      writeRequest(
        s,
        Array.from({ length: BATCH }, (_, i) => ({ type, entity: route(s, b * BATCH + i) })),
      ),
    );
  const inserts = batches("INSERT");
  const deletes = batches("DELETE");
  const rates: number[] = [];
  const cpuRates: number[] = [];
  for (let round = 0; round < WARM_ROUNDS + TIMED_ROUNDS; round++) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (const b of inserts) await unary(s, "Write", b);
    const cpu = process.cpuUsage(cpu0);
    if (round >= WARM_ROUNDS) {
      rates.push(ENTRIES / ((performance.now() - t0) / 1000));
      cpuRates.push(ENTRIES / ((cpu.user + cpu.system) / 1e6));
    }
    if (round < WARM_ROUNDS + TIMED_ROUNDS - 1) for (const b of deletes) await unary(s, "Write", b);
  }
  return { rates, cpuRates };
}

/** Single-entry writes among ENTRIES: insert one route, then delete it, SINGLE_WRITES times each; each one's ms. */
async function singleWrites(s: Setup): Promise<number[]> {
  const insertOne = Array.from({ length: SINGLE_WRITES }, (_, i) =>
    writeRequest(s, [{ type: "INSERT", entity: route(s, ENTRIES + i) }]),
  );
  const deleteOne = Array.from({ length: SINGLE_WRITES }, (_, i) =>
    writeRequest(s, [{ type: "DELETE", entity: route(s, ENTRIES + i) }]),
  );
  const single: number[] = [];
  for (let i = 0; i < SINGLE_WRITES; i++) {
    for (const request of [insertOne[i], deleteOne[i]]) {
      const at = performance.now();
      await unary(s, "Write", request ?? Buffer.alloc(0));
      single.push(performance.now() - at);
    }
  }
  return single;
}

/** Reads of every entry of the table (checked to be ENTRIES first), READS_ALL times: each one's ms. */
async function readsOfAll(s: Setup): Promise<number[]> {
  const readAll = encode("p4.v1.ReadRequest", {
    deviceId: s.deviceId,
    entities: [{ tableEntry: { tableId: s.tableId } }],
  });
  const got = entitiesIn(await read(s, readAll)).length;
  if (got !== ENTRIES) throw new Error(`read ${got} entries, expected ${ENTRIES}`);
  const all: number[] = [];
  for (let i = 0; i < READS_ALL; i++) {
    const at = performance.now();
    await read(s, readAll);
    all.push(performance.now() - at);
  }
  return all;
}

/** Reads of one entry by its match key, READS_ONE of them: each one's ms. */
async function readsOfOne(s: Setup): Promise<number[]> {
  const keyed = Array.from({ length: READS_ONE }, (_, i) => {
    const te = route(s, (i * 7919) % ENTRIES).tableEntry as M;
    return encode("p4.v1.ReadRequest", {
      deviceId: s.deviceId,
      entities: [{ tableEntry: { tableId: te.tableId, match: te.match } }],
    });
  });
  if (entitiesIn(await read(s, keyed[0] ?? Buffer.alloc(0))).length !== 1)
    throw new Error("a read by key did not return one entry");
  const one: number[] = [];
  for (const request of keyed) {
    const at = performance.now();
    await read(s, request);
    one.push(performance.now() - at);
  }
  return one;
}

export const p4runtime: FigureScenario = {
  name: "p4runtime",
  description:
    `strata's P4Runtime server and a gRPC client in this process: ${ENTRIES} LPM routes written in ` +
    `batches of ${BATCH}, single-entry writes among them, a read of them all, reads of one by key`,
  figures,
};
