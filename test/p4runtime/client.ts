// A P4Runtime client for the tests, built from the official definitions in
// test/fixtures/p4runtime with @grpc/grpc-js and @grpc/proto-loader — nothing
// from the server's own code (src/p4runtime) — plus raw calls that send and
// receive bytes as they are, decoded with protobufjs from the same files.

import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { HANG_MS } from "../helpers/wait.js";

const dir = new URL("../fixtures/p4runtime/", import.meta.url).pathname;

const definition = loader.loadSync("p4/v1/p4runtime.proto", {
  includeDirs: [dir],
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: true,
});
const pkg = grpc.loadPackageDefinition(definition) as unknown as {
  p4: { v1: { P4Runtime: grpc.ServiceClientConstructor } };
};
/** The P4Runtime service as the official definitions say it, for a test's own server. */
export const P4RUNTIME_SERVICE: grpc.ServiceDefinition = pkg.p4.v1.P4Runtime.service;

function root(): protobuf.Root {
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : join(dir, target));
  r.loadSync(["p4/v1/p4runtime.proto", "google/rpc/status.proto"]);
  r.resolveAll();
  return r;
}
export const ROOT = root();

export type M = Record<string, unknown>;

export interface RpcError {
  readonly code: number;
  readonly details: string;
  /** Write: the p4.v1.Error of each update, from the google.rpc.Status details. */
  readonly errors: readonly { readonly canonicalCode: number; readonly message: string }[];
}

export class Client {
  readonly raw: grpc.Client;
  readonly #stub: Record<string, (...args: unknown[]) => unknown>;

  /** Plain text, unless `credentials` says otherwise (TLS). */
  constructor(address: string, credentials = grpc.credentials.createInsecure()) {
    this.#stub = new pkg.p4.v1.P4Runtime(address, credentials) as unknown as Record<
      string,
      (...args: unknown[]) => unknown
    >;
    this.raw = this.#stub as unknown as grpc.Client;
  }

  close(): void {
    this.raw.close();
  }

  unary(method: string, request: M): Promise<M> {
    return new Promise((resolve, reject) => {
      const fn = this.#stub[method];
      if (fn === undefined) throw new Error(`no method ${method}`);
      fn.call(this.#stub, request, (err: grpc.ServiceError | null, res: M) =>
        err === null ? resolve(res) : reject(toRpcError(err)),
      );
    });
  }

  /** A unary call with the request as bytes (e.g. entries.bin) and the response as bytes. */
  unaryRaw(method: string, request: Uint8Array): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.raw.makeUnaryRequest(
        `/p4.v1.P4Runtime/${method}`,
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        request,
        (err, res) => (err === null || err === undefined ? resolve(res ?? Buffer.alloc(0)) : reject(toRpcError(err))),
      );
    });
  }

  read(request: M): Promise<M[]> {
    return new Promise((resolve, reject) => {
      const fn = this.#stub.read;
      const call = fn?.call(this.#stub, request) as grpc.ClientReadableStream<M>;
      const entities: M[] = [];
      call.on("data", (r: M) => entities.push(...((r.entities ?? []) as M[])));
      call.on("error", (e: grpc.ServiceError) => reject(toRpcError(e)));
      call.on("end", () => resolve(entities));
    });
  }

  stream(): Stream {
    const fn = this.#stub.streamChannel;
    return new Stream(fn?.call(this.#stub) as grpc.ClientDuplexStream<M, M>);
  }
}

function toRpcError(e: grpc.ServiceError): RpcError {
  const bin = e.metadata?.get("grpc-status-details-bin")[0];
  let errors: { canonicalCode: number; message: string }[] = [];
  if (bin instanceof Buffer) {
    const status = ROOT.lookupType("google.rpc.Status").toObject(ROOT.lookupType("google.rpc.Status").decode(bin)) as {
      details?: { type_url?: string; typeUrl?: string; value?: Uint8Array }[];
    };
    const Error = ROOT.lookupType("p4.v1.Error");
    errors = (status.details ?? []).map((d) => {
      const url = d.type_url ?? d.typeUrl;
      if (url !== "type.googleapis.com/p4.v1.Error") throw new globalThis.Error(`detail of type ${url}`);
      const o = Error.toObject(Error.decode(d.value ?? new Uint8Array(0)), { defaults: true }) as {
        canonicalCode: number;
        message: string;
      };
      return { canonicalCode: o.canonicalCode, message: o.message };
    });
  }
  return { code: e.code, details: e.details, errors };
}

/** A StreamChannel: messages received are queued; next() waits for one. */
export class Stream {
  readonly call: grpc.ClientDuplexStream<M, M>;
  readonly #queue: M[] = [];
  #waiting: ((m: M) => void) | undefined;
  error: RpcError | undefined;
  ended = false;

  constructor(call: grpc.ClientDuplexStream<M, M>) {
    this.call = call;
    call.on("data", (m: M) => {
      const w = this.#waiting;
      if (w !== undefined) {
        this.#waiting = undefined;
        w(m);
      } else this.#queue.push(m);
    });
    call.on("error", (e: grpc.ServiceError) => {
      this.error = toRpcError(e);
      const w = this.#waiting;
      this.#waiting = undefined;
      w?.({ streamError: this.error });
    });
    call.on("end", () => {
      this.ended = true;
    });
  }

  send(m: M): void {
    this.call.write(m);
  }

  arbitrate(deviceId: number, electionLow: number | undefined, role?: string): void {
    this.send({
      arbitration: {
        deviceId: String(deviceId),
        ...(electionLow !== undefined ? { electionId: { high: "0", low: String(electionLow) } } : {}),
        ...(role !== undefined ? { role: { name: role } } : {}),
      },
    });
  }

  /** The next message (or { streamError } if the stream failed), within `ms` (a hang after). */
  next(ms = HANG_MS): Promise<M> {
    const m = this.#queue.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.error !== undefined) return Promise.resolve({ streamError: this.error });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = undefined;
        reject(new Error(`no stream message in ${ms / 1000} s`));
      }, ms);
      this.#waiting = (x) => {
        clearTimeout(timer);
        resolve(x);
      };
    });
  }

  /** Messages that arrive within `ms` (to show that none does). */
  async drain(ms: number): Promise<M[]> {
    await new Promise((r) => setTimeout(r, ms));
    return this.#queue.splice(0);
  }

  close(): void {
    this.call.end();
  }
}

/** The code in an arbitration response's status. */
export const statusCode = (m: M): number =>
  Number(((m.arbitration as M | undefined)?.status as M | undefined)?.code ?? 0);
