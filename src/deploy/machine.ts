// One machine on one P4Runtime device, converged: the device's pipeline compared with the
// machine's (set if it differs, refused if a table's key does), what it holds read, and only
// the difference written, batch by batch. Each update that fails is said with the description
// row it comes from; the rest of its batch and the batches after it are written all the same.

import {
  type ClientTls,
  type Controller,
  P4RuntimeClient,
  RpcError,
  type Session,
  type Standing,
} from "../p4runtime/client.js";
import type { p4 } from "../p4runtime/messages.js";
import { Code } from "../p4runtime/proto.js";
import type { MachineDesired } from "./desired.js";
import { bmv2Config, p4ToolRoot } from "./p4c.js";
import { pipelineVerdict } from "./pipeline.js";
import { batches, type Change, diff, readRequests } from "./plan.js";

export interface Target {
  readonly machine: string;
  /** HOST:PORT. */
  readonly address: string;
  readonly deviceId: bigint;
}

export interface DeployOptions {
  readonly electionId: bigint;
  readonly role: string;
  readonly tls?: ClientTls;
  /** The most updates in one Write. */
  readonly batch: number;
  /** How long to wait for the device to answer at all. */
  readonly connectMs: number;
  /** The device config of a program, for a device that needs one (default: bmv2's, compiled with p4c-bm2-ss). */
  readonly deviceConfig?: (program: string) => Promise<Uint8Array>;
}

export interface Failure {
  readonly change: Change;
  readonly code: number;
  readonly message: string;
}

export interface Outcome {
  readonly machine: string;
  readonly address: string;
  readonly deviceId: bigint;
  /** The pipeline: kept, set (and why), or for a plan, to be set. */
  readonly pipeline: { readonly set: boolean; readonly why: string };
  /** The changes made (or, for a plan, to make), in order. */
  readonly changes: readonly Change[];
  /** Of those, how many the device took (a plan: 0). */
  readonly written: number;
  readonly writes: number;
  readonly failed: readonly Failure[];
}

/** Why a machine could not be converged at all (nothing written past the point it says). */
export class Refusal extends Error {
  /** Another controller is primary: the highest election id the device has seen, if it said. */
  readonly notPrimary: { readonly highest: bigint | undefined } | undefined;
  constructor(message: string, notPrimary?: { readonly highest: bigint | undefined }) {
    super(message);
    this.notPrimary = notPrimary;
  }
}

/** The words for another controller being primary. */
export function notPrimaryWords(s: Standing | undefined, c: Controller): string {
  const other = s?.highest === undefined ? "" : ` (election id ${s.highest})`;
  return (
    `another controller${other} is primary for device ${c.deviceId}${c.role === "" ? "" : ` role ${c.role}`}; ` +
    `ours is ${c.electionId}: give a higher --election-id, or --watch to wait until we are primary`
  );
}

/** The words for a device that kept refusing our election id as another stream's. */
function takenWords(e: RpcError, c: Controller): string {
  return (
    `device ${c.deviceId} refused our election id ${c.electionId}${c.role === "" ? "" : ` for role ${c.role}`} ` +
    `(${e.details}): another controller uses it; give another --election-id`
  );
}

/** A connection to a machine's device: a client, and (to write) a StreamChannel on which we are primary. */
export class MachineLink {
  readonly target: Target;
  readonly controller: Controller;
  readonly client: P4RuntimeClient;
  readonly #options: DeployOptions;
  session: Session | undefined;
  /** The cookie this session found or set on the device: while it is primary on the default role, nobody else could
   * have set another pipeline (a device that restarts ends the stream), so a reconcile need not ask again. */
  #pipelineOf: { readonly session: Session; readonly cookie: string } | undefined;

  constructor(target: Target, options: DeployOptions) {
    this.target = target;
    this.#options = options;
    this.controller = { deviceId: target.deviceId, electionId: options.electionId, role: options.role };
    this.client = new P4RuntimeClient(target.address, options.tls);
  }

  /**
   * Connects; to write, arbitrates too and returns the device's answer (whether we are primary). A device that says our
   * election id is another stream's (INVALID_ARGUMENT) is asked again, with backoff, until connectMs: that stream is
   * often our own last run's, which the device has not yet seen end; past it, a Refusal as for another primary.
   */
  async open(arbitrate: boolean): Promise<Standing | undefined> {
    const until = Date.now() + this.#options.connectMs;
    await this.client.ready(this.#options.connectMs);
    if (!arbitrate) return undefined;
    for (let wait = 50; ; wait = Math.min(2 * wait, 1000)) {
      this.session = this.client.session(this.controller);
      try {
        return await this.session.standing(this.#options.connectMs);
      } catch (e) {
        if (!(e instanceof RpcError) || e.code !== Code.INVALID_ARGUMENT) throw e;
        this.session.close();
        if (Date.now() + wait > until) throw new Refusal(takenWords(e, this.controller), { highest: undefined });
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  close(): void {
    this.session?.close();
    this.client.close();
  }

  /**
   * The device's pipeline, or undefined when it has none (FAILED_PRECONDITION: bmv2 started with --no-p4). The cookie
   * alone first: ours names the P4Info and the program, so the P4Info is asked for only when the cookie is not ours.
   */
  async #pipeline(d: MachineDesired): Promise<p4.v1.ForwardingPipelineConfig | undefined> {
    if (this.#pipelineKnown(d.cookie)) return { p4info: d.p4info, cookie: { cookie: d.cookie } };
    try {
      const cookie = await this.client.getPipeline(this.target.deviceId, "COOKIE_ONLY");
      if (cookie.cookie?.cookie === d.cookie) return { p4info: d.p4info, cookie: cookie.cookie };
      return await this.client.getPipeline(this.target.deviceId);
    } catch (e) {
      if (e instanceof RpcError && e.code === Code.FAILED_PRECONDITION) return undefined;
      throw e;
    }
  }

  /** Whether this session already saw the device run the pipeline of `cookie`, and nobody could have set another. */
  #pipelineKnown(cookie: string): boolean {
    const k = this.#pipelineOf;
    const s = this.session;
    if (k === undefined || s === undefined || k.session !== s || k.cookie !== cookie) return false;
    return !s.ended && s.last?.primary === true && this.controller.role === "";
  }

  /** Sets the pipeline: the P4Info and cookie alone where the device runs this P4Info and takes that, else with the
   * compiled program. */
  async #setPipeline(d: MachineDesired, sameP4Info: boolean): Promise<void> {
    const base = { p4info: d.p4info, cookie: { cookie: d.cookie } };
    if (sameP4Info) {
      try {
        return await this.client.setPipeline(this.controller, base);
      } catch (e) {
        // A device that needs its program with the P4Info (bmv2) says so; one that cannot take it anyway does not.
        const retry = e instanceof RpcError && e.code !== Code.UNAVAILABLE && e.code !== Code.PERMISSION_DENIED;
        if (!retry || (this.#options.deviceConfig === undefined && p4ToolRoot() === undefined)) throw e;
      }
    }
    const compile = this.#options.deviceConfig ?? bmv2Config;
    const p4DeviceConfig = await compile(d.program);
    await this.client.setPipeline(this.controller, { ...base, p4DeviceConfig });
  }

  /** What the device holds of the entities strata writes: one Read. */
  read(d: MachineDesired): Promise<p4.v1.Entity[]> {
    return this.client.read(this.target.deviceId, readRequests(d.p4info), this.controller.role);
  }

  /**
   * Converges the device to `d` (a plan: says what it would do, and does nothing). Throws a Refusal
   * for a device that cannot take the machine, an RpcError for a device that went away.
   */
  async converge(d: MachineDesired, plan: boolean): Promise<Outcome> {
    const verdict = pipelineVerdict(await this.#pipeline(d), d);
    if (verdict.action === "refuse") throw new Refusal(`${verdict.why}: refused, nothing written`);
    const pipeline = verdict.action === "set" ? { set: true, why: verdict.why } : { set: false, why: "" };
    if (verdict.action === "set" && !plan) await this.#setPipeline(d, verdict.sameP4Info);
    if (!plan && this.session !== undefined) this.#pipelineOf = { session: this.session, cookie: d.cookie };
    // A pipeline set anew starts empty; a plan takes it as empty without asking.
    const observed = plan && verdict.action === "set" ? [] : await this.read(d);
    const changes = diff(d, observed);
    const base = { machine: this.target.machine, address: this.target.address, deviceId: this.target.deviceId };
    if (plan) return { ...base, pipeline, changes, written: 0, writes: 0, failed: [] };
    const failed: Failure[] = [];
    let writes = 0;
    for (const batch of batches(changes, this.#options.batch)) {
      writes++;
      failed.push(...(await this.#write(batch)));
    }
    return { ...base, pipeline, changes, written: changes.length - failed.length, writes, failed };
  }

  /** One Write; the updates that failed, each with its error (the others were applied: CONTINUE_ON_ERROR). */
  async #write(batch: readonly Change[]): Promise<Failure[]> {
    try {
      await this.client.write(
        this.controller,
        batch.map((c) => c.update),
      );
      return [];
    } catch (e) {
      if (!(e instanceof RpcError) || e.updates.length !== batch.length) throw e;
      return e.updates.flatMap((u, i) => {
        const change = batch[i];
        return u.code === Code.OK || change === undefined ? [] : [{ change, code: u.code, message: u.message }];
      });
    }
  }
}
