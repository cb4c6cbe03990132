// What the server's handlers share of gRPC: the methods' request and response types, an error
// with its status code, the bind with gRPC's own log lines held, and a Write applied to a
// device (./device-state.ts) and sent to the data plane.

import { format } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { entryKey, type Ledger } from "../control/ledger.js";
import type { Device } from "../p4/device.js";
import { deviceUpdates } from "../p4/entries.js";
import type { P4InfoIds } from "../p4/p4info.js";
import type { Tables } from "../wasm/tables.js";
import type { DeviceState, Staged } from "./device-state.js";
import type { Encodable, p4 } from "./messages.js";
import { Code, type UpdateError } from "./proto.js";
import { type Arbiter, uint128 } from "./arbitration.js";

/** A method's request, as gRPC hands it to the handler (decoded with LOADER_OPTIONS). */
export type Request<M extends keyof p4.v1.P4Runtime> = p4.v1.P4Runtime[M]["request"];
/** A method's response, as the handler gives it to gRPC to encode. */
export type Response<M extends keyof p4.v1.P4Runtime> = p4.v1.P4Runtime<Encodable>[M]["response"];

export type Stream = grpc.ServerDuplexStream<Request<"StreamChannel">, Response<"StreamChannel">>;

export const rpcError = (code: number, details: string, metadata?: grpc.Metadata): grpc.ServiceError =>
  Object.assign(new Error(details), { code, details, metadata: metadata ?? new grpc.Metadata() });

/** An error that carries its gRPC status code: one rpcError made, or a Refusal. */
export const hasCode = (e: unknown): e is Error & { readonly code: number } =>
  e instanceof Error && "code" in e && typeof e.code === "number";

/**
 * Sends a staged batch's writes to the data plane (through the ledger) as one all-or-nothing
 * write and notes what only P4Runtime keeps of them; if the data plane refuses it, the batch is
 * undone. Returns why it refused.
 */
export function commit(staged: Staged, tables: Tables): string | undefined {
  const plan = staged.plan();
  const result = tables.write(plan.writes);
  if (!result.ok) {
    staged.rollback();
    return result.error;
  }
  plan.commit();
  return undefined;
}

/**
 * A Write's updates applied to a device, update by update; with ROLLBACK_ON_ERROR or
 * DATAPLANE_ATOMIC, one failed update rolls the batch back. Returns each update's error.
 */
export function applyWrite(
  state: DeviceState,
  updates: readonly p4.v1.Update[],
  atomicity: string,
  ledger: Ledger,
  tables: Tables,
): readonly UpdateError[] {
  const staged = state.stage(updates, ledger, tables);
  const errors = staged.errors;
  const failed = errors.findIndex((e) => e.code !== Code.OK);
  if (failed >= 0 && atomicity !== "CONTINUE_ON_ERROR") {
    staged.rollback();
    return errors.map((e) =>
      e.code === Code.OK
        ? {
            code: Code.ABORTED,
            message: `not applied: update ${failed} failed and the batch (${atomicity}) was rolled back`,
          }
        : e,
    );
  }
  const refused = commit(staged, tables);
  if (refused !== undefined)
    return errors.map(() => ({
      code: Code.INTERNAL,
      message: `the data plane refused the batch (${refused}); nothing was applied`,
    }));
  return errors;
}

/** Lines gRPC logs while a server binds: held, then dropped if the bind fails (the caller says why in one line), else
 * printed. */
let bindLog: string[] | undefined;
const grpcLogger =
  (prefix: string) =>
  (message?: unknown, ...rest: unknown[]): void => {
    const line = `${prefix} ${format(message, ...rest)}`;
    if (bindLog !== undefined) bindLog.push(line);
    else console.error(line);
  };

/** `server.bindAsync`, with gRPC's own log lines held until it is known whether it bound. */
export async function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  grpc.setLogger({ error: grpcLogger("E"), info: grpcLogger("I"), debug: grpcLogger("D") });
  const held: string[] = [];
  bindLog = held;
  try {
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (err, p) => (err === null ? resolve(p) : reject(err))),
    );
    for (const line of held) console.error(line);
    return port;
  } catch (e) {
    // gRPC's "No address added out of total 1 resolved errors: [listen EADDRINUSE: …]": the errors.
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(/errors: \[(.+)\]$/s.exec(message)?.[1] ?? message);
  } finally {
    if (bindLog === held) bindLog = undefined;
  }
}

/** Whether `key` is new to `seen` (then added). */
function once(seen: Set<string>, key: string): boolean {
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/**
 * What the export writes for a device, installed: its multicast groups and action profiles
 * staged as a controller's writes, and the description's rows through the ledger, where the
 * engine does not hold them yet. Returns what failed.
 */
export function installExport(
  state: DeviceState,
  dev: Device,
  ids: P4InfoIds,
  ledger: Ledger,
  tables: Tables,
): string | undefined {
  const staged = state.stage(deviceUpdates(dev, ids), ledger, tables);
  const bad = staged.errors.find((e) => e.code !== Code.OK);
  if (bad !== undefined) {
    staged.rollback();
    return `the exported entities do not load: ${bad.message}`;
  }
  const refused = commit(staged, tables);
  if (refused !== undefined) return refused;
  // Rows the ledger holds already (the engine installed them) are not written again, nor a second row with the
  // match of one before it (an export writes it as the same entry).
  const rows = dev.tables.flatMap((t) => {
    const keys = new Set<string>();
    return t.table.rows
      .filter((r) => ledger.get(t.table, r.match) === undefined && once(keys, entryKey(t.table, r.match)))
      .map((r) => ({ op: "insert" as const, table: t.table, match: r.match, action: r.action }));
  });
  const result = tables.write(rows);
  if (!result.ok) return `the description's rows do not load: ${result.error}`;
  return undefined;
}

/** GetForwardingPipelineConfig's answer for a response type: the P4Info and the cookie, or the cookie alone. */
export function configResponse(
  type: NonNullable<Request<"GetForwardingPipelineConfig">["responseType"]>,
  p4info: p4.config.v1.P4Info,
  cookie: p4.v1.ForwardingPipelineConfig.Cookie | undefined,
): Response<"GetForwardingPipelineConfig"> {
  const c = cookie === undefined ? {} : { cookie };
  switch (type) {
    case "ALL":
    case "P4INFO_AND_COOKIE":
      return { config: { p4info, ...c } };
    case "COOKIE_ONLY":
    case "DEVICE_CONFIG_AND_COOKIE":
      return { config: { ...c } };
    default:
      throw rpcError(Code.INVALID_ARGUMENT, `response type ${type}`);
  }
}

/** NOT_FOUND for a role the device does not have (§12); PERMISSION_DENIED unless the request carries the election id
 * of the device's (role's) primary. */
export function checkPrimary(
  arbiter: Arbiter<Stream>,
  deviceId: number,
  role: string | undefined,
  electionId: p4.v1.Uint128 | undefined,
): void {
  const r = role ?? "";
  if (!arbiter.knows(deviceId, r))
    throw rpcError(
      Code.NOT_FOUND,
      `device ${deviceId} has no role ${r}: a role is one a controller has arbitrated for on a StreamChannel`,
    );
  const primary = arbiter.primaryElectionId(deviceId, r);
  const given = uint128(electionId);
  if (primary === undefined)
    throw rpcError(
      Code.PERMISSION_DENIED,
      `device ${deviceId} has no primary controller: open a StreamChannel and send an arbitration update first`,
    );
  if (given !== primary)
    throw rpcError(
      Code.PERMISSION_DENIED,
      `election id ${given ?? "(none)"} is not the primary's (${primary}) on device ${deviceId}`,
    );
}
