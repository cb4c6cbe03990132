// The IP router example as the P4Runtime tests drive it: its export (device
// ids, P4Info ids of r's tables and actions), a route entry factory, and a
// server on a free port over a fresh emulation of it.

import { expect } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { exportP4, type MachineExport } from "../../src/p4/export.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { type Client, type M, statusCode, type Stream } from "./client.js";

export const SPEC = "examples/ip-router/network.yaml";
/** gRPC canonical codes. */
export const OK = 0,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  FAILED_PRECONDITION = 9,
  ABORTED = 10;

export const exports = exportP4(compile(loadSpec(SPEC)), SPEC);
export const machine = (name: string): MachineExport => {
  const ex = exports.find((e) => e.manifest.machine === name);
  if (ex === undefined) throw new Error(`no machine ${name}`);
  return ex;
};
export const p4info = (name: string): M => JSON.parse(String(machine(name).files["p4info.json"])) as M;
export const R = machine("r").manifest.deviceId;
const rInfo = p4info("r");
/** One of r's P4Info tables, by alias. */
export const table = (alias: string): M =>
  ((rInfo.tables as M[]).find((t) => (t.preamble as M).alias === alias) ?? {}) as M;
export const tableId = (alias: string): number => Number((table(alias).preamble as M).id);
/** One of r's P4Info action ids, by alias. */
export const actionId = (alias: string): number =>
  Number((((rInfo.actions as M[]).find((a) => (a.preamble as M).alias === alias) ?? {}).preamble as M).id);
export const FORWARD = tableId("ip_r_forward");
export const OUT = actionId("forward_out");

/** An ip.r forward entry: dst a.b.c.d/len → out-link. */
export const route = (dst: number[], len: number, out: number, extra: M = {}): M => ({
  tableEntry: {
    tableId: FORWARD,
    match: [{ fieldId: 1, lpm: { value: Buffer.from(dst), prefixLen: len } }],
    action: { action: { actionId: OUT, params: [{ paramId: 1, value: Buffer.from([out]) }] } },
    ...extra,
  },
});
export const election = (low: number): M => ({ high: "0", low: String(low) });

/** A server on a free port over a fresh emulation of the example. */
export async function serve(
  empty: boolean,
): Promise<{ server: P4RuntimeServer; emulation: EngineEmulation; address: string }> {
  const emulation = EngineEmulation.local(compile(loadSpec(SPEC)));
  const server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", empty });
  return { server, emulation, address: `127.0.0.1:${server.port}` };
}

/** A stream that has become the device's primary (for the default role, or `role`). */
export async function primary(client: Client, deviceId: number, low: number, role?: string): Promise<Stream> {
  const s = client.stream();
  s.arbitrate(deviceId, low, role);
  const m = await s.next();
  expect(statusCode(m)).toBe(OK);
  return s;
}
