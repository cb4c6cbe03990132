// A keyless table's default entry, onto strata's own P4Runtime server: deploy sets it as the export
// says — the row's action, or with no row the program's miss (P4Info's initial_default_action) —
// and modifies it back when the device holds another (a row taken out of the description, or a
// write behind deploy's back). Read with the tests' own client.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { exportP4 } from "../../src/p4/export.js";
import { Client, type M } from "../p4runtime/client.js";
import { deploy, serveEmpty, spec } from "./helpers.js";

const IP = spec("ip-router");
const TEXT = readFileSync(IP, "utf8");
/** ip.r's receive table, keyless: one row (`deliver`), or none. */
const WITH_ROW = "        receive:  [ { do: deliver } ]\n        forward:\n          kind: lpm";
const NO_ROW = "        receive:  []\n        forward:\n          kind: lpm";
const tmp = mkdtempSync(join(tmpdir(), "strata-deploy-defaults-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** ip_r_receive's id and its actions' (by alias) in ip-router's P4Info. */
function ids(): { table: number; action: (alias: string) => number } {
  const ex = exportP4(compile(loadSpec(IP)), IP).find((e) => e.manifest.machine === "r");
  const info = ex?.messages.p4info;
  const table = info?.tables?.find((t) => t.preamble?.alias === "ip_r_receive")?.preamble?.id ?? 0;
  const action = (alias: string): number => info?.actions?.find((a) => a.preamble?.alias === alias)?.preamble?.id ?? 0;
  return { table, action };
}

/** The action id of ip_r_receive's default entry on device 2. */
async function defaultAction(address: string, table: number): Promise<number> {
  const client = new Client(address);
  try {
    const [e] = await client.read({
      deviceId: "2",
      entities: [{ tableEntry: { tableId: table, isDefaultAction: true } }],
    });
    const te = (e as M | undefined)?.tableEntry as M | undefined;
    return Number((((te?.action as M | undefined)?.action as M | undefined)?.actionId as number | undefined) ?? 0);
  } finally {
    client.close();
  }
}

/** Another controller (its own role) sets ip_r_receive's default action on device 2. */
async function setBehind(address: string, table: number, actionId: number): Promise<void> {
  const client = new Client(address);
  try {
    const stream = client.stream();
    stream.arbitrate(2, 1, "other");
    await stream.next();
    const entry = { tableId: table, isDefaultAction: true, action: { action: { actionId } } };
    await client.unary("write", {
      deviceId: "2",
      role: "other",
      electionId: { low: "1" },
      updates: [{ type: "MODIFY", entity: { tableEntry: entry } }],
    });
    stream.close();
  } finally {
    client.close();
  }
}

const CASES = [
  {
    name: "the keyless table's row taken out of the description: its default set back to the miss",
    first: WITH_ROW,
    then: NO_ROW,
    behind: undefined,
    want: "receive_miss",
  },
  {
    name: "its default changed behind deploy's back: modified back to the row's action",
    first: WITH_ROW,
    then: WITH_ROW,
    behind: "receive_miss",
    want: "receive_deliver",
  },
  {
    name: "a keyless table with no row, its default changed behind deploy's back: modified back to the miss",
    first: NO_ROW,
    then: NO_ROW,
    behind: "receive_deliver",
    want: "receive_miss",
  },
];

describe("strata deploy: a keyless table's default entry", () => {
  it.each(CASES)("$name", async ({ first, then, behind, want }) => {
    expect(TEXT).toContain(WITH_ROW);
    const file = join(tmp, `${first === WITH_ROW ? "row" : "none"}-${behind ?? "none"}.yaml`);
    const server = await serveEmpty(IP);
    const { table, action } = ids();
    try {
      writeFileSync(file, TEXT.replace(WITH_ROW, first));
      expect((await deploy([file, "--target", `r=${server.address}`])).code).toBe(0);
      writeFileSync(file, TEXT.replace(WITH_ROW, then));
      if (behind !== undefined) await setBehind(server.address, table, action(behind));
      const r = await deploy([file, "--target", `r=${server.address}`]);
      expect(r.err).toBe("");
      expect(r.out).toBe(`r (${server.address} device 2): 0 inserted, 1 modified, 0 deleted in 1 write\n`);
      expect(await defaultAction(server.address, table)).toBe(action(want));
      const again = await deploy([file, "--target", `r=${server.address}`]);
      expect(again.out).toBe(`r (${server.address} device 2): converged, nothing to write\n`);
    } finally {
      await server.close();
    }
  });
});
