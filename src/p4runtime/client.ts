// A P4Runtime client (the controller's side of the service ./server.ts serves), on the same
// official definitions (./proto.ts): connect in plain text or over TLS, arbitrate on a
// StreamChannel (device, election id, role: whether we are primary, and the highest election id
// the device has seen), get and set the forwarding pipeline, Read every entity kind, Write with
// each update's p4.v1.Error decoded, and packet-ins and packet-outs on the stream. No command
// line here: `strata deploy` (src/deploy/) and the library's devices use it alike.

import { EventEmitter } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { protoRoot } from "./definitions.js";
import type { Encodable, p4 } from "./messages.js";
import { Code, ERROR_TYPE_URL, p4runtimeService } from "./proto.js";

/** TLS as a client: the CA the server's certificate must chain to, and our own certificate and key if it asks. */
export interface ClientTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** What a device is reached as: its address, its device id, and who we are to it. */
export interface Controller {
  readonly deviceId: bigint;
  readonly electionId: bigint;
  /** The default role when empty. */
  readonly role: string;
}

/** A failed call: its gRPC code and message; for a Write, each update's error (OK for those applied). */
export class RpcError extends Error {
  readonly code: number;
  readonly details: string;
  readonly updates: readonly UpdateStatus[];

  constructor(code: number, details: string, updates: readonly UpdateStatus[] = []) {
    super(`${codeName(code)}: ${details}`);
    this.code = code;
    this.details = details;
    this.updates = updates;
  }
}

/** One update's outcome in a Write (p4.v1.Error: canonical code OK when it was applied). */
export interface UpdateStatus {
  readonly code: number;
  readonly message: string;
}

/** The name of a gRPC canonical code ("NOT_FOUND"), or its number. */
export function codeName(code: number): string {
  return Object.entries(Code).find(([, v]) => v === code)?.[0] ?? String(code);
}

/** A 128-bit number as the message holds it, each half a decimal string. */
export function toUint128(n: bigint): p4.v1.Uint128<Encodable> {
  return { high: String(n >> 64n), low: String(n & 0xffff_ffff_ffff_ffffn) };
}

/** A Uint128 message as a number (absent halves are 0); undefined for an absent message. */
export function fromUint128(m: p4.v1.Uint128 | undefined): bigint | undefined {
  if (m === undefined) return undefined;
  return (BigInt(m.high ?? "0") << 64n) | BigInt(m.low ?? "0");
}

type Service = ReturnType<typeof p4runtimeService>;
type Method = keyof Service;
type Req<M extends Method> = p4.v1.P4Runtime<Encodable>[M]["request"];
type Res<M extends Method> = p4.v1.P4Runtime[M]["response"];

/** A connection to a P4Runtime server (one gRPC channel; devices are named per call). */
export class P4RuntimeClient {
  readonly address: string;
  readonly #client: grpc.Client;
  readonly #service: Service;

  constructor(address: string, tls?: ClientTls) {
    this.address = address;
    this.#service = p4runtimeService();
    const credentials =
      tls === undefined
        ? grpc.credentials.createInsecure()
        : grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null);
    this.#client = new grpc.Client(address, credentials);
  }

  /** Waits until the channel is connected, or rejects with UNAVAILABLE after `ms`. */
  ready(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#client.waitForReady(Date.now() + ms, (err) =>
        err === undefined || err === null
          ? resolve()
          : reject(
              new RpcError(
                Code.UNAVAILABLE,
                `${this.address}: not reachable in ${ms / 1000} s (${err.message}): is the device up, and does it ` +
                  `take plain text or TLS as given?`,
              ),
            ),
      );
    });
  }

  close(): void {
    this.#client.close();
  }

  #unary<M extends Exclude<Method, "Read" | "StreamChannel">>(method: M, request: Req<M>): Promise<Res<M>> {
    const d = this.#service[method] as unknown as grpc.MethodDefinition<Req<M>, Res<M>>;
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(d.path, d.requestSerialize, d.responseDeserialize, request, (err, res) =>
        err === null || err === undefined ? resolve(res as Res<M>) : reject(rpcErrorOf(err)),
      );
    });
  }

  /** The device's pipeline: its P4Info and cookie by default. */
  async getPipeline(
    deviceId: bigint,
    responseType: p4.v1.GetForwardingPipelineConfigRequest.ResponseType = "P4INFO_AND_COOKIE",
  ): Promise<p4.v1.ForwardingPipelineConfig> {
    const res = await this.#unary("GetForwardingPipelineConfig", { deviceId: String(deviceId), responseType });
    return res.config ?? {};
  }

  /** Sets the device's pipeline (VERIFY_AND_COMMIT unless told otherwise). */
  async setPipeline(
    c: Controller,
    config: p4.v1.ForwardingPipelineConfig<Encodable>,
    action: p4.v1.SetForwardingPipelineConfigRequest.Action = "VERIFY_AND_COMMIT",
  ): Promise<void> {
    await this.#unary("SetForwardingPipelineConfig", { ...request(c), action, config });
  }

  /**
   * Writes updates; resolves when all were applied, or rejects with an RpcError whose
   * `updates` say which failed (CONTINUE_ON_ERROR: the others were applied).
   */
  async write(
    c: Controller,
    updates: readonly p4.v1.Update<Encodable>[],
    atomicity: p4.v1.WriteRequest.Atomicity = "CONTINUE_ON_ERROR",
  ): Promise<void> {
    await this.#unary("Write", { ...request(c), updates, atomicity });
  }

  /** Reads entities (a 0 id or absent field is a wildcard), every response's entities in order. */
  read(deviceId: bigint, entities: readonly p4.v1.Entity<Encodable>[], role = ""): Promise<p4.v1.Entity[]> {
    const d = this.#service.Read as unknown as grpc.MethodDefinition<Req<"Read">, Res<"Read">>;
    const req: Req<"Read"> = { deviceId: String(deviceId), entities, ...(role !== "" ? { role } : {}) };
    return new Promise((resolve, reject) => {
      const call = this.#client.makeServerStreamRequest(d.path, d.requestSerialize, d.responseDeserialize, req);
      const out: p4.v1.Entity[] = [];
      call.on("data", (r: Res<"Read">) => out.push(...(r.entities ?? [])));
      call.on("error", (e: grpc.ServiceError) => reject(rpcErrorOf(e)));
      call.on("end", () => resolve(out));
    });
  }

  /** Opens a StreamChannel and sends the arbitration update; see Session. */
  session(c: Controller): Session {
    const d = this.#service.StreamChannel as unknown as grpc.MethodDefinition<
      p4.v1.StreamMessageRequest<Encodable>,
      p4.v1.StreamMessageResponse
    >;
    const call = this.#client.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    return new Session(call, c);
  }
}

/** The ids a request to a device carries. */
function request(c: Controller): { deviceId: string; electionId: p4.v1.Uint128<Encodable>; role?: string } {
  return {
    deviceId: String(c.deviceId),
    electionId: toUint128(c.electionId),
    ...(c.role !== "" ? { role: c.role } : {}),
  };
}

/** A gRPC error as an RpcError: a Write's per-update errors decoded from its google.rpc.Status details. */
export function rpcErrorOf(e: grpc.ServiceError): RpcError {
  const bin = e.metadata?.get("grpc-status-details-bin")[0];
  return new RpcError(e.code, e.details, bin instanceof Buffer ? updateErrors(bin) : []);
}

/** The p4.v1.Error in each detail of a binary google.rpc.Status (details of other types are left out). */
export function updateErrors(bin: Uint8Array): UpdateStatus[] {
  const r = protoRoot();
  const status = r.lookupType("google.rpc.Status");
  const error = r.lookupType("p4.v1.Error");
  const s = status.toObject(status.decode(bin)) as { details?: { type_url?: string; value?: Uint8Array }[] };
  return (s.details ?? [])
    .filter((d) => d.type_url === ERROR_TYPE_URL)
    .map((d) => {
      const o = error.toObject(error.decode(d.value ?? new Uint8Array(0))) as {
        canonicalCode?: number;
        message?: string;
      };
      return { code: o.canonicalCode ?? Code.OK, message: o.message ?? "" };
    });
}

/** What an arbitration response says of us. */
export interface Standing {
  /** We are the device's (role's) primary. */
  readonly primary: boolean;
  /** The highest election id the device has seen for the role (ours when primary), if it said. */
  readonly highest: bigint | undefined;
  readonly message: string;
}

export interface SessionEvents {
  standing: [Standing];
  packetIn: [p4.v1.PacketIn];
  /** A stream error the device sent (§16.3) — the stream goes on. */
  streamError: [p4.v1.StreamError];
  /** The stream ended, or failed with an error. */
  end: [RpcError | undefined];
}

/**
 * A StreamChannel arbitrating for a device: `standing()` resolves with the first arbitration
 * response; later ones (another controller came or went) are `standing` events.
 */
export class Session extends EventEmitter<SessionEvents> {
  readonly controller: Controller;
  readonly #call: grpc.ClientDuplexStream<p4.v1.StreamMessageRequest<Encodable>, p4.v1.StreamMessageResponse>;
  #last: Standing | undefined;
  #ended: RpcError | "ended" | undefined;

  constructor(
    call: grpc.ClientDuplexStream<p4.v1.StreamMessageRequest<Encodable>, p4.v1.StreamMessageResponse>,
    c: Controller,
  ) {
    super();
    this.controller = c;
    this.#call = call;
    call.on("data", (m: p4.v1.StreamMessageResponse) => this.#receive(m));
    call.on("error", (e: grpc.ServiceError) => this.#end(rpcErrorOf(e)));
    call.on("end", () => this.#end(undefined));
    call.write({
      arbitration: {
        deviceId: String(c.deviceId),
        electionId: toUint128(c.electionId),
        ...(c.role !== "" ? { role: { name: c.role } } : {}),
      },
    });
  }

  #receive(m: p4.v1.StreamMessageResponse): void {
    if (m.update === "arbitration") {
      const a = m.arbitration;
      const code = a.status?.code ?? Code.OK;
      this.#last = { primary: code === Code.OK, highest: fromUint128(a.electionId), message: a.status?.message ?? "" };
      this.emit("standing", this.#last);
    } else if (m.update === "packet") this.emit("packetIn", m.packet);
    else if (m.update === "error") this.emit("streamError", m.error);
  }

  #end(e: RpcError | undefined): void {
    if (this.#ended !== undefined) return;
    this.#ended = e ?? "ended";
    this.emit("end", e);
  }

  /** Whether the stream has ended (the device went away, or we closed it). */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** The latest standing the device told us, if any. */
  get last(): Standing | undefined {
    return this.#last;
  }

  /** The first (or latest) arbitration response; rejects if the stream ends before one, or after `ms`. */
  standing(ms: number): Promise<Standing> {
    if (this.#last !== undefined) return Promise.resolve(this.#last);
    if (this.#ended !== undefined) return Promise.reject(this.#endError());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        done();
        reject(new RpcError(Code.DEADLINE_EXCEEDED, `no arbitration response in ${ms / 1000} s`));
      }, ms);
      const onStanding = (s: Standing): void => {
        done();
        resolve(s);
      };
      const onEnd = (): void => {
        done();
        reject(this.#endError());
      };
      const done = (): void => {
        clearTimeout(timer);
        this.off("standing", onStanding);
        this.off("end", onEnd);
      };
      this.on("standing", onStanding);
      this.on("end", onEnd);
    });
  }

  #endError(): RpcError {
    return this.#ended instanceof RpcError
      ? this.#ended
      : new RpcError(Code.UNAVAILABLE, "the stream ended before an arbitration response");
  }

  /** Sends a packet-out (only the primary's reach the device). */
  packetOut(p: p4.v1.PacketOut<Encodable>): void {
    this.#call.write({ packet: p });
  }

  close(): void {
    if (this.#ended === undefined) this.#call.end();
    this.#call.cancel();
    this.#end(undefined);
  }
}
