// `strata deploy` from code: the library's deploy() converges each named machine of a description
// onto its P4Runtime device once (or plans it), through the same reconciler as the command
// (machine.ts), and says per machine what it did or why it could not. `once` is the command's too.

import type { Description } from "../api/description.js";
import { loaded } from "../api/emulation.js";
import { compile } from "../control/compile.js";
import { InputError } from "../errors.js";
import { type ClientTls, codeName, RpcError } from "../p4runtime/client.js";
import { Code } from "../p4runtime/proto.js";
import { desiredState, type MachineDesired } from "./desired.js";
import {
  type DeployOptions as LinkOptions,
  MachineLink,
  notPrimaryWords,
  type Outcome,
  Refusal,
  type Target,
} from "./machine.js";
import { counts, type Op } from "./plan.js";

/** A machine of the description and the P4Runtime device it goes onto. */
export interface DeployTarget {
  readonly machine: string;
  /** The device's server, "HOST:PORT". */
  readonly address: string;
  /** Default: the export's (the machine's place in the description, from 1). */
  readonly deviceId?: bigint;
}

export interface DeployOptions {
  /** Ours on every device (default 1): the highest is the primary, and only it may write. */
  readonly electionId?: bigint;
  /** Default: the default role. */
  readonly role?: string;
  readonly tls?: ClientTls;
  /** The most updates in one Write (default 1000). */
  readonly batch?: number;
  /** How long a device has to connect and answer the arbitration (default 10 s). */
  readonly timeoutMs?: number;
  /** Read and compare only: say what would be written, write nothing. */
  readonly plan?: boolean;
  /** The name a description built in code goes by in messages (default "description"). */
  readonly name?: string;
}

/** A change made (or, planning, to make): the table (or selector, or replication entries) and the row it is for. */
export interface DeployChange {
  readonly op: Op;
  readonly where: string;
  /** The description's row it comes from; for a delete, "not in the description". */
  readonly origin: string;
}

/** An update the device refused: the change, the P4Runtime code's name and the device's message. */
export interface DeployFailure extends DeployChange {
  readonly code: string;
  readonly message: string;
}

/** What deploy() did on one machine's device. */
export interface MachineDeployed {
  readonly machine: string;
  readonly address: string;
  readonly deviceId: bigint;
  /** Why the machine could not be converged at all (nothing written past that point); undefined when it was. */
  readonly refused: string | undefined;
  /** The refusal is another controller being primary. */
  readonly notPrimary: boolean;
  /** The pipeline was (planning: is to be) set, and why; false when the device ran it already. */
  readonly pipelineSet: boolean;
  readonly pipelineWhy: string;
  /** The changes, in the order they were (or would be) written; of them, those the device refused. */
  readonly changes: readonly DeployChange[];
  readonly failed: readonly DeployFailure[];
  /** Counts of what the device took (planning: of what would be written). */
  readonly inserted: number;
  readonly modified: number;
  readonly deleted: number;
}

/** A machine converged (or planned) once on its own connection; what went wrong as a Refusal with its line. */
export async function once(
  t: Target,
  options: LinkOptions,
  d: MachineDesired,
  plan: boolean,
): Promise<Outcome | Refusal> {
  const link = new MachineLink(t, options);
  try {
    const standing = await link.open(!plan);
    if (standing !== undefined && !standing.primary)
      return new Refusal(notPrimaryWords(standing, link.controller), { highest: standing.highest });
    return await link.converge(d, plan);
  } catch (e) {
    if (e instanceof Refusal) return e;
    if (e instanceof RpcError && e.code === Code.PERMISSION_DENIED)
      return new Refusal(`no longer primary (${e.details}): another controller took over`, { highest: undefined });
    if (e instanceof RpcError && e.code === Code.UNAVAILABLE) return new Refusal(e.details);
    return new Refusal(e instanceof Error ? e.message : String(e));
  } finally {
    link.close();
  }
}

/**
 * Converges each target's machine onto its device, all at once, each on its own connection: the pipeline set where it
 * differs, then only the entries that differ written. Resolves with one result per target, in order; rejects only for
 * a description that does not load (SpecError) or a target naming no machine of it (InputError).
 */
export async function deploy(
  source: string | Description,
  targets: readonly DeployTarget[],
  options: DeployOptions = {},
): Promise<MachineDeployed[]> {
  const name = typeof source === "string" ? source : (options.name ?? "description");
  const desired = desiredState(compile(loaded(source, name).spec), name);
  const link: LinkOptions = {
    electionId: options.electionId ?? 1n,
    role: options.role ?? "",
    ...(options.tls !== undefined ? { tls: options.tls } : {}),
    batch: options.batch ?? 1000,
    connectMs: options.timeoutMs ?? 10_000,
  };
  const plan = options.plan === true;
  return Promise.all(
    targets.map(async (t) => {
      const d = desired.find((m) => m.machine === t.machine);
      if (d === undefined) {
        const machines = desired.map((m) => m.machine).join(", ");
        throw new InputError(
          name,
          `target ${t.machine}`,
          `the description has no machine ${t.machine}`,
          `machines: ${machines}`,
        );
      }
      const target = { machine: t.machine, address: t.address, deviceId: t.deviceId ?? BigInt(d.deviceId) };
      return result(target, await once(target, link, d, plan), plan);
    }),
  );
}

function result(t: Target, r: Outcome | Refusal, plan: boolean): MachineDeployed {
  const base = { machine: t.machine, address: t.address, deviceId: t.deviceId };
  if (r instanceof Refusal) {
    const none = { pipelineSet: false, pipelineWhy: "", changes: [], failed: [], inserted: 0, modified: 0, deleted: 0 };
    return { ...base, refused: r.message, notPrimary: r.notPrimary !== undefined, ...none };
  }
  const change = (c: Outcome["changes"][number]): DeployChange => ({ op: c.op, where: c.where, origin: c.origin });
  const refused = new Set(r.failed.map((f) => f.change));
  const n = counts(plan ? r.changes : r.changes.filter((c) => !refused.has(c)));
  return {
    ...base,
    refused: undefined,
    notPrimary: false,
    pipelineSet: r.pipeline.set,
    pipelineWhy: r.pipeline.why,
    changes: r.changes.map(change),
    failed: r.failed.map((f) => ({ ...change(f.change), code: codeName(f.code), message: f.message })),
    inserted: n.insert,
    modified: n.modify,
    deleted: n.delete,
  };
}
