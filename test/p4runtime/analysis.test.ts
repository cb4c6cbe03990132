// The analysis reads every entry of every table, whoever wrote it: a
// P4Runtime controller that inserts a route the description does not have into
// `serve --analyze` changes the relations and the properties `counts` shows,
// and deleting it restores them (src/analysis/entry-rows.ts, TableIndex.
// setOthers); so does a transmit entry the description does not have
// (Analysis.setOthers, KeyedTable.others). On the IP router example, served
// filled, over real gRPC.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { otherEntries } from "../../src/analysis/entry-rows.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { EngineEmulation, P4RUNTIME_OUTPUTS } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { ServeAnalysis } from "../../src/serve/analysis.js";
import { Client, type M, type Stream } from "./client.js";
import { actionId, election, primary, R, route, SPEC, tableId } from "./ip-router.js";

const compiled = compile(loadSpec(SPEC));
let engine: Engine;
let server: P4RuntimeServer;
let analysis: ServeAnalysis;
let client: Client;
let stream: Stream;
const said: string[] = [];

beforeAll(async () => {
  engine = Engine.open({ compiled });
  engine.connect(P4RUNTIME_OUTPUTS);
  server = await P4RuntimeServer.start(new EngineEmulation(engine, true), { address: "127.0.0.1:0", empty: false });
  analysis = new ServeAnalysis(engine, (line) => said.push(line), 64);
  client = new Client(`127.0.0.1:${server.port}`);
  stream = await primary(client, R, 1);
});
afterAll(async () => {
  stream.close();
  client.close();
  await analysis.close();
  await server.close();
});

/** ip.r's transmit entry for out-link 2 (what a delete names), and one that sends it onto its link (transmit_physical;
 * the description sends it through lanB's session 1). */
const out2 = { tableId: tableId("ip_r_transmit"), match: [{ fieldId: 1, exact: { value: Buffer.from([0, 2]) } }] };
const physicalOut2: M = {
  tableEntry: {
    ...out2,
    action: { action: { actionId: actionId("transmit_physical"), params: [{ paramId: 1, value: Buffer.from([0]) }] } },
  },
};

const write = (updates: M[]): Promise<M> =>
  client.unary("write", { deviceId: String(R), electionId: election(1), updates });

const HOLDS =
  /^analysis: every property holds \(19\)(; last update: \d+ rows?, \d+ header class(es)? walked again in [\d.]+ ms)?$/;
const FAILS =
  /^analysis: 1 of 19 properties fail: Fully_reachable \(ip\); last update: 1 row, \d+ header class(es)? walked again/;

describe("serve --analyze follows a P4Runtime controller's entries, description rows or not", () => {
  // Each step after the one before: r's routes as a controller writes them (ip.r forward: 10.0.1.0/24 → 1 and
  // 10.0.2.0/24 → 2 in the description).
  const steps: { name: string; updates: M[]; counts: RegExp; h1ReachesH2: boolean }[] = [
    { name: "the description's routes", updates: [], counts: HOLDS, h1ReachesH2: true },
    {
      name: "a /32 route to h2 back out of link 1, no row of the description",
      updates: [{ type: "INSERT", entity: route([10, 0, 2, 2], 32, 1) }],
      counts: FAILS,
      h1ReachesH2: false,
    },
    {
      name: "that route deleted",
      updates: [{ type: "DELETE", entity: route([10, 0, 2, 2], 32, 1) }],
      counts: HOLDS,
      h1ReachesH2: true,
    },
    {
      name: "the description's route to h2 deleted",
      updates: [{ type: "DELETE", entity: route([10, 0, 2, 0], 24, 2) }],
      counts: FAILS,
      h1ReachesH2: false,
    },
    {
      name: "a wider route that the description lacks, toward h2",
      updates: [{ type: "INSERT", entity: route([10, 0, 0, 0], 16, 2) }],
      counts: HOLDS,
      h1ReachesH2: true,
    },
    {
      name: "the wider route deleted",
      updates: [{ type: "DELETE", entity: route([10, 0, 0, 0], 16, 2) }],
      counts: FAILS,
      h1ReachesH2: false,
    },
    {
      name: "the description's route to h2 back, its transmit row for out-link 2 deleted: a transmit miss",
      updates: [
        { type: "INSERT", entity: route([10, 0, 2, 0], 24, 2) },
        { type: "DELETE", entity: { tableEntry: out2 } },
      ],
      counts: /^analysis: 1 of 19 properties fail: Fully_reachable \(ip\); last update: 2 rows/,
      h1ReachesH2: false,
    },
    {
      name: "out-link 2 onto its link (physical), no row of the description",
      updates: [{ type: "INSERT", entity: physicalOut2 }],
      counts: HOLDS,
      h1ReachesH2: true,
    },
  ];
  // An analysis of this process's, brought to the ledger after each step as the thread is: its relation says who
  // reaches whom.
  const live = new LiveAnalysis(compiled);
  const reaches = (from: string, to: string): boolean => {
    const a = live.analysis;
    const ip = a.components.find((c) => c.name === "ip");
    const [m0, m1] = [a.memberNamed(from)?.index ?? -1, a.memberNamed(to)?.index ?? -1];
    return ip === undefined ? false : (live.relations.relation.get(ip)?.reaches(m0, m1) ?? false);
  };
  it.each(steps)("$name", async ({ updates, counts, h1ReachesH2 }) => {
    if (updates.length > 0) await expect(write(updates)).resolves.toEqual({});
    await analysis.settled();
    expect(analysis.line()).toMatch(counts);
    live.update(engine.installed, undefined, otherEntries(engine.installed, engine.ledger));
    expect(reaches("ip.h1", "ip.h2")).toBe(h1ReachesH2);
    expect(reaches("ip.h2", "ip.h1")).toBe(true);
    expect(said.filter((l) => l.startsWith("strata:"))).toEqual([]);
  });
});
