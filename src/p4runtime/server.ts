// strata's P4Runtime server (gRPC, the official p4.v1.P4Runtime service): each
// machine of the description is a device, numbered as `strata export p4`
// numbers them, serving the P4Info that export writes. Write, Read,
// Get/SetForwardingPipelineConfig, Capabilities and StreamChannel (arbitration,
// PacketOut in, PacketIn out) act on a running emulation (./emulation.ts);
// every table change goes to the data plane between packet batches.
//
// Bad input is answered, never thrown: a malformed request gets its status
// (INVALID_ARGUMENT, NOT_FOUND, …) and leaves the devices as they were; a
// message that does not even decode is refused by gRPC itself. Requests may be
// as large as MAX_REQUEST_BYTES (a large Write batch); a Read's answer is split
// into responses a client takes by default (READ_RESPONSE_MAX, §13.3).
//
// A controller that does not read its stream costs a bounded amount: each
// stream holds at most PACKET_IN_QUEUE packet-ins beyond what gRPC buffers, and
// drops (and counts) the rest. close() gives open calls CLOSE_GRACE_MS to end,
// then cancels them: a controller never leaves on its own.

import * as grpc from "@grpc/grpc-js";
import type { CompiledSpec } from "../control/compiled.js";
import type { Injection } from "../control/install.js";
import { canonical } from "../p4/bytes.js";
import type { Installed } from "../control/install.js";
import type { Ledger } from "../control/ledger.js";
import { devices } from "../p4/device.js";
import { p4info, p4infoIds } from "../p4/p4info.js";
import { Arbiter, uint128 } from "./arbitration.js";
import { CLOSE_GRACE_MS } from "./close-grace.js";
import { DeviceState } from "./device-state.js";
import type { ControlledEmulation, Delivery } from "./emulation.js";
import type { p4 } from "./messages.js";
import { Code, p4runtimeService, READ_RESPONSE_MAX, readResponses, servedDefinition, statusDetails } from "./proto.js";
import { HANDSHAKE_LIMITS, type HandshakeLimits, TlsListener } from "./handshakes.js";
import {
  applyWrite,
  bind,
  checkPrimary,
  commit,
  configResponse,
  hasCode,
  installExport,
  type Request,
  type Response,
  rpcError,
  type Stream,
} from "./rpc.js";
import { PacketInQueue, packetOutAt, type ServerStats, tellVerdicts } from "./stream.js";
import type { Tls } from "./tls.js";

/** The P4Runtime version the server speaks (the official definitions it loads). */
export const API_VERSION = "1.4.0";

export interface ServerOptions {
  /** HOST:PORT to listen on; port 0 picks a free one. */
  readonly address: string;
  /** Leave every device without entries (a controller installs them); otherwise each starts with its export's
   * WriteRequest. */
  readonly empty?: boolean;
  /** Where lines about tables written behind the server that a device cannot follow go (default: stderr). */
  readonly warn?: (line: string) => void;
  /** Serve over TLS (with a CA: only to clients with a certificate it signed); otherwise in plain text. */
  readonly tls?: Tls;
  /** How long a TLS handshake may take, and how many may wait at once (tests ask for less). */
  readonly handshakes?: HandshakeLimits;
}

/** Packet-ins a primary's stream holds while its controller does not read them (beyond gRPC's 16); later ones are
 * dropped. */
export const PACKET_IN_QUEUE = 1024;

/** The largest request the server takes, as p4lang/PI's server (gRPC's default, 4 MiB, is too small for a large Write
 * batch or pipeline). */
export const MAX_REQUEST_BYTES = 256 * 1024 * 1024;

interface Served {
  readonly state: DeviceState;
  /** GetForwardingPipelineConfig's P4Info, decoded as gRPC decodes messages. */
  readonly p4info: p4.config.v1.P4Info;
  /** The P4Info in binary, to compare a SetForwardingPipelineConfig's with. */
  readonly p4infoBinary: Buffer;
  /** The P4Info as the export makes it, to tell whether a reload changed it. */
  readonly p4infoJson: string;
  /** Whether a reload changed its P4Info (or took its machine away): it keeps the description it had. */
  frozen: boolean;
  cookie: p4.v1.ForwardingPipelineConfig.Cookie | undefined;
}

export { describeStats, type ServerStats } from "./stream.js";

export class P4RuntimeServer {
  readonly #server = new grpc.Server({ "grpc.max_receive_message_length": MAX_REQUEST_BYTES });
  /** With TLS: the listener that runs the handshakes before gRPC sees a connection. */
  #tls: TlsListener | undefined;
  readonly #emulation: ControlledEmulation;
  readonly #devices = new Map<number, Served>();
  readonly #arbiter = new Arbiter<Stream>();
  readonly #pending: { stream: Stream; at: Injection; data: Uint8Array }[] = [];
  #flush: NodeJS.Immediate | undefined;
  readonly #unsubscribe: () => void;
  readonly #queues = new Map<Stream, PacketInQueue>();
  #closing = false;
  readonly stats: ServerStats = { packetOuts: 0, packetIns: 0, packetInsDropped: 0, packetInsStreamFull: 0 };
  port = 0;

  /** Lines about what a write behind the server left its devices unable to follow (stderr). */
  readonly #warn: (line: string) => void;

  private constructor(emulation: ControlledEmulation, warn: (line: string) => void) {
    this.#emulation = emulation;
    this.#warn = warn;
    const off = emulation.onDeliver((d) => this.#packetIn(d));
    const offTables = emulation.onTablesWritten?.((_tables, installed) => this.#reloaded(installed));
    this.#unsubscribe = () => {
      off();
      offTables?.();
    };
  }

  /**
   * The tables were written behind the server (a control command, a reload). The devices read the
   * ledger when next asked; here a reload that took a device's machine away or changed its P4Info
   * is said once, and that device keeps the description it had.
   */
  #reloaded(installed: Installed): void {
    const byId = new Map(devices(installed.compiled).map((dev) => [dev.deviceId, dev]));
    for (const [id, d] of this.#devices) {
      if (d.frozen || installed.compiled === d.state.compiled) continue;
      const dev = byId.get(id);
      if (dev === undefined) {
        d.frozen = true;
        this.#warn(
          `strata: p4runtime: device ${id} (${d.state.machine}) is no longer in the description; its entities ` +
            `are left as they were`,
        );
      } else if (JSON.stringify(p4info(dev, p4infoIds(dev))) !== d.p4infoJson) {
        d.frozen = true;
        this.#warn(
          `strata: p4runtime: device ${id} (${d.state.machine}): the reload changed its P4Info; its entities are ` +
            `left as they were (restart strata serve to serve the new one)`,
        );
      }
    }
  }

  /** The device on the description in force: after a reload that kept its P4Info, its tables as the new one has. */
  #current(d: Served, ledger: Ledger): DeviceState {
    if (d.frozen || ledger.compiled === d.state.compiled) return d.state;
    for (const line of d.state.retable(ledger.compiled, ledger))
      this.#warn(`strata: p4runtime: device ${d.state.deviceId} (${d.state.machine}): ${line}`);
    return d.state;
  }

  /** Builds every device, installs its entries (unless `empty`) and listens. */
  static async start(emulation: ControlledEmulation, options: ServerOptions): Promise<P4RuntimeServer> {
    const s = new P4RuntimeServer(emulation, options.warn ?? ((line) => process.stderr.write(`${line}\n`)));
    await s.#load(emulation.compiled, options);
    s.#server.addService(servedDefinition(), s.#handlers());
    const tls = options.tls;
    if (tls === undefined) {
      s.port = await bind(s.#server, options.address, grpc.ServerCredentials.createInsecure());
    } else {
      // strata runs the handshakes (with a deadline and a cap: ./handshakes.ts); gRPC gets the secure connections.
      const injector = s.#server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
      try {
        s.#tls = await TlsListener.listen(
          options.address,
          tls,
          (socket) => injector.injectConnection(socket),
          options.handshakes ?? HANDSHAKE_LIMITS,
        );
      } catch (e) {
        injector.destroy();
        throw e;
      }
      s.port = s.#tls.port;
    }
    return s;
  }

  /**
   * Builds every device. Unless `empty`, each starts with what the export writes for it: its
   * multicast groups and action profiles staged as a controller's writes, and the description's
   * rows (through the ledger, where the engine does not hold them yet), which its entities follow.
   */
  async #load(compiled: CompiledSpec, options: ServerOptions): Promise<void> {
    const service = p4runtimeService();
    for (const dev of devices(compiled)) {
      // The export's messages, built as gRPC decodes them (test/p4/messages.test.ts): served and staged as they are.
      const ids = p4infoIds(dev);
      const info = p4info(dev, ids);
      const state = new DeviceState(compiled, { deviceId: dev.deviceId, machine: dev.machine, p4info: info });
      const p4infoBinary = service.SetForwardingPipelineConfig.requestSerialize({ config: { p4info: info } });
      const p4infoJson = JSON.stringify(info);
      const served: Served = { state, p4info: info, p4infoBinary, p4infoJson, frozen: false, cookie: undefined };
      this.#devices.set(dev.deviceId, served);
      if (options.empty === true) continue;
      const error = await this.#emulation.control((tables, ledger) => installExport(state, dev, ids, ledger, tables));
      if (error !== undefined) throw new Error(`machine ${dev.machine}: ${error}`);
    }
  }

  /**
   * Stops listening and taking packet-outs; the calls and streams still open have `graceMs` to
   * end, then they are cancelled.
   */
  async close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    this.#closing = true;
    this.#tls?.close();
    this.#unsubscribe();
    if (this.#flush !== undefined) clearImmediate(this.#flush);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#server.forceShutdown();
        resolve();
      }, graceMs);
      this.#server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.#server.forceShutdown();
  }

  /** TLS connections whose handshake has not completed, and those closed for taking too long or to make room. */
  get handshakes(): {
    readonly pending: number;
    readonly closed: { readonly deadline: number; readonly room: number };
  } {
    return { pending: this.#tls?.pending ?? 0, closed: this.#tls?.closed ?? { deadline: 0, room: 0 } };
  }

  /** Packet-ins held for controllers that have not read them yet, over every stream. */
  get queuedPacketIns(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.queued;
    return n;
  }

  get deviceIds(): number[] {
    return [...this.#devices.keys()];
  }

  #device(id: string | number | undefined): Served {
    const n = Number(id ?? 0);
    const d = this.#devices.get(n);
    if (d === undefined)
      throw rpcError(
        Code.NOT_FOUND,
        `no device ${id ?? 0} (devices: ${this.deviceIds.join(", ")}, one per machine, as strata export p4 ` +
          `numbers them)`,
      );
    return d;
  }

  #handlers(): grpc.UntypedServiceImplementation {
    const unary =
      <M extends "Capabilities" | "GetForwardingPipelineConfig" | "SetForwardingPipelineConfig" | "Write">(
        fn: (req: Request<M>) => Promise<Response<M>>,
      ): grpc.handleUnaryCall<Request<M>, Response<M>> =>
      (call, callback) => {
        fn(call.request).then(
          (res) => callback(null, res),
          (err: unknown) =>
            callback(hasCode(err) ? err : rpcError(Code.INTERNAL, err instanceof Error ? err.message : String(err))),
        );
      };
    return {
      Capabilities: unary<"Capabilities">(async () => ({ p4runtimeApiVersion: API_VERSION })),
      GetForwardingPipelineConfig: unary<"GetForwardingPipelineConfig">(async (req) => this.#getConfig(req)),
      SetForwardingPipelineConfig: unary<"SetForwardingPipelineConfig">(async (req) => this.#setConfig(req)),
      Write: unary<"Write">(async (req) => this.#write(req)),
      // Read's responses are the bytes readResponses() framed (servedDefinition()).
      Read: (call: grpc.ServerWritableStream<Request<"Read">, Buffer>) => {
        this.#read(call.request).then(
          (entities) => {
            for (const response of readResponses(entities, READ_RESPONSE_MAX)) call.write(response);
            call.end();
          },
          (err: unknown) => call.emit("error", hasCode(err) ? err : rpcError(Code.INTERNAL, String(err))),
        );
      },
      StreamChannel: (stream: Stream) => this.#stream(stream),
    };
  }

  async #getConfig(req: Request<"GetForwardingPipelineConfig">): Promise<Response<"GetForwardingPipelineConfig">> {
    const d = this.#device(req.deviceId);
    return configResponse(req.responseType ?? "ALL", d.p4info, d.cookie);
  }

  async #setConfig(req: Request<"SetForwardingPipelineConfig">): Promise<Response<"SetForwardingPipelineConfig">> {
    const d = this.#device(req.deviceId);
    const id = d.state.deviceId;
    checkPrimary(this.#arbiter, id, req.role, req.electionId);
    const action = req.action ?? "UNSPECIFIED";
    const config = req.config;
    if (action !== "VERIFY" && action !== "VERIFY_AND_COMMIT" && action !== "RECONCILE_AND_COMMIT") {
      throw rpcError(
        Code.UNIMPLEMENTED,
        `action ${action}: strata's devices run the program of their machine; they take VERIFY, ` +
          `VERIFY_AND_COMMIT and RECONCILE_AND_COMMIT of its P4Info`,
      );
    }
    const p4info = config?.p4info;
    if (p4info === undefined) throw rpcError(Code.INVALID_ARGUMENT, `${action} needs a config with a P4Info`);
    const given = p4runtimeService().SetForwardingPipelineConfig.requestSerialize({ config: { p4info } });
    if (Buffer.compare(given, d.p4infoBinary) !== 0) {
      throw rpcError(
        Code.INVALID_ARGUMENT,
        `device ${id} runs machine ${d.state.machine} of ${d.state.compiled.spec.file}; it takes only the P4Info ` +
          `strata export p4 writes for it (p4info.json, or GetForwardingPipelineConfig), not another program`,
      );
    }
    if (action === "VERIFY") return {};
    d.cookie = config?.cookie;
    if (action === "VERIFY_AND_COMMIT") {
      // A committed pipeline starts with no forwarding state.
      const error = await this.#emulation.control((tables, ledger) =>
        commit(this.#current(d, ledger).clear(ledger), tables),
      );
      if (error !== undefined) throw rpcError(Code.INTERNAL, `the data plane refused to clear device ${id}: ${error}`);
    }
    return {};
  }

  async #write(req: Request<"Write">): Promise<Response<"Write">> {
    const d = this.#device(req.deviceId);
    checkPrimary(this.#arbiter, d.state.deviceId, req.role, req.electionId);
    const atomicity = req.atomicity ?? "CONTINUE_ON_ERROR";
    if (atomicity !== "CONTINUE_ON_ERROR" && atomicity !== "ROLLBACK_ON_ERROR" && atomicity !== "DATAPLANE_ATOMIC") {
      throw rpcError(Code.INVALID_ARGUMENT, `atomicity ${atomicity}`);
    }
    const updates = req.updates ?? [];
    const errors = await this.#emulation.control((tables, ledger) =>
      applyWrite(this.#current(d, ledger), updates, atomicity, ledger, tables),
    );
    if (errors.every((e) => e.code === Code.OK)) return {};
    const metadata = new grpc.Metadata();
    const bad = errors.filter((e) => e.code !== Code.OK).length;
    const message = `${bad} of ${errors.length} updates failed`;
    metadata.set("grpc-status-details-bin", statusDetails(Code.UNKNOWN, message, errors));
    throw rpcError(Code.UNKNOWN, message, metadata);
  }

  /** The entities a Read asks for, encoded; the first request that fails fails the Read with its code. */
  async #read(req: Request<"Read">): Promise<Uint8Array[]> {
    const d = this.#device(req.deviceId);
    const entities = req.entities ?? [];
    return this.#emulation.control((tables, ledger) => {
      const state = this.#current(d, ledger);
      try {
        return entities.flatMap((e) => state.read(e, ledger, tables));
      } catch (e) {
        const code = hasCode(e) ? e.code : Code.INVALID_ARGUMENT;
        throw rpcError(code, e instanceof Error ? e.message : String(e));
      }
    });
  }

  // ── StreamChannel ────────────────────────────────────────────────────────

  #stream(stream: Stream): void {
    const send = (m: Response<"StreamChannel">): void => {
      if (!stream.writableEnded && !stream.destroyed) stream.write(m);
    };
    const tell = (verdicts: ReturnType<Arbiter<Stream>["leave"]>): void => tellVerdicts(this.#arbiter, verdicts);
    const fail = (code: number, message: string): void => {
      tell(this.#arbiter.leave(stream));
      stream.emit("error", rpcError(code, message));
    };
    const streamError = (code: number, message: string, packet?: p4.v1.PacketOut): void =>
      send({
        error: {
          canonicalCode: code,
          message,
          ...(packet !== undefined ? { packetOut: { packetOut: packet } } : { other: {} }),
        },
      });
    stream.on("data", (m: Request<"StreamChannel">) => {
      try {
        if (m.update === "arbitration") return this.#arbitrate(stream, m.arbitration, fail, tell);
        const c = this.#arbiter.contender(stream);
        if (c === undefined)
          return streamError(
            Code.FAILED_PRECONDITION,
            "send an arbitration update first",
            m.update === "packet" ? m.packet : undefined,
          );
        if (m.update === "packet") return this.#packetOut(stream, c.deviceId, c.role, m.packet, streamError);
        return streamError(
          Code.UNIMPLEMENTED,
          `stream messages of kind ${m.update ?? "none"} are not handled (arbitration and packet are)`,
        );
      } catch (e) {
        streamError(Code.INTERNAL, e instanceof Error ? e.message : String(e));
      }
    });
    this.#queues.set(stream, new PacketInQueue(stream, PACKET_IN_QUEUE));
    const leave = (): void => {
      this.#queues.delete(stream);
      tell(this.#arbiter.leave(stream));
    };
    stream.on("end", () => {
      leave();
      if (!stream.writableEnded && !stream.destroyed) stream.end();
    });
    stream.on("error", leave);
    stream.on("cancelled", leave);
  }

  /** An arbitration update on a stream (§5): the device must be there, the role without a configuration. */
  #arbitrate(
    stream: Stream,
    a: p4.v1.MasterArbitrationUpdate,
    fail: (code: number, message: string) => void,
    tell: (verdicts: ReturnType<Arbiter<Stream>["leave"]>) => void,
  ): void {
    const deviceId = Number(a.deviceId ?? 0);
    if (!this.#devices.has(deviceId))
      return fail(Code.NOT_FOUND, `no device ${deviceId} (devices: ${this.deviceIds.join(", ")})`);
    const role = a.role?.name ?? "";
    const config = a.role?.config;
    if (config !== undefined && ((config.type_url ?? "") !== "" || (config.value?.length ?? 0) > 0)) {
      // §5.3: strata agrees on no role configuration scheme with anyone: every role has the whole pipeline.
      return fail(
        Code.INVALID_ARGUMENT,
        `role.config of type ${config.type_url ?? "(none)"}: strata knows no role configuration; leave it ` +
          `unset (every role has the whole pipeline)`,
      );
    }
    const result = this.#arbiter.update(stream, { deviceId, role, electionId: uint128(a.electionId) });
    if ("code" in result) return fail(result.code, result.message);
    return tell(result.verdicts);
  }

  #packetOut(
    stream: Stream,
    deviceId: number,
    role: string,
    p: p4.v1.PacketOut,
    streamError: (code: number, message: string, packet?: p4.v1.PacketOut) => void,
  ): void {
    if (this.#arbiter.primary(deviceId, role) !== stream)
      return streamError(Code.PERMISSION_DENIED, "only the primary controller sends packets", p);
    if (this.#closing) return streamError(Code.UNAVAILABLE, "the server is stopping", p);
    const d = this.#device(deviceId);
    const at = packetOutAt(d.state, p);
    if (typeof at === "string") return streamError(Code.INVALID_ARGUMENT, at, p);
    const payload = p.payload ?? new Uint8Array(0);
    this.stats.packetOuts++;
    this.#pending.push({ stream, at, data: new Uint8Array(payload) });
    // Packet-outs that arrive together run as one batch.
    this.#flush ??= setImmediate(() => {
      this.#flush = undefined;
      const batch = this.#pending.splice(0);
      this.#emulation.inject(batch.map((x) => ({ at: x.at, data: x.data }))).catch((e: unknown) => {
        for (const x of batch)
          if (!x.stream.destroyed)
            x.stream.write({ error: { canonicalCode: Code.INTERNAL, message: String(e), other: {} } });
      });
    });
  }

  #packetIn(d: Delivery): void {
    const member = this.#emulation.compiled.members[d.member];
    if (member === undefined) return;
    const deviceId = member.machine + 1;
    const served = this.#devices.get(deviceId);
    const primary = this.#arbiter.primary(deviceId, "");
    const number = served?.state.dev.members.find((m) => m.member.index === d.member)?.number;
    const queue = primary === undefined ? undefined : this.#queues.get(primary);
    if (primary === undefined || queue === undefined || number === undefined || primary.destroyed) {
      this.stats.packetInsDropped++;
      return;
    }
    const packetIn = {
      packet: {
        payload: Buffer.from(d.data),
        metadata: [
          { metadataId: 1, value: Buffer.from(canonical(BigInt(number))) },
          { metadataId: 2, value: Buffer.from(canonical(BigInt(d.inLink))) },
        ],
      },
    };
    if (queue.offer(packetIn)) this.stats.packetIns++;
    else this.stats.packetInsStreamFull++;
  }
}
