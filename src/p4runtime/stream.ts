// A StreamChannel's parts (§5, §16): the packet-ins queued for a controller that reads slower
// than they come, the arbitration verdicts told to each stream, and a PacketOut's metadata
// checked and turned into where the packet enters the emulation.

import type { Injection } from "../control/install.js";
import { bytestringValue } from "../p4/import.js";
import { canonicalOf } from "../p4/bytes.js";
import { type Arbiter, toUint128 } from "./arbitration.js";
import type { DeviceState } from "./device-state.js";
import type { p4 } from "./messages.js";
import { Code } from "./proto.js";
import type { Response, Stream } from "./rpc.js";

/**
 * A PacketOut's metadata by name, checked against the P4Info's packet_out header (§16.1):
 * every field exactly once, each value a bytestring of its bit width; or what is wrong.
 */
function packetOutMetadata(
  fields: ReadonlyMap<number, { readonly name: string; readonly bits: number }>,
  given: readonly p4.v1.PacketMetadata[],
): Map<string, bigint> | string {
  const out = new Map<string, bigint>();
  for (const m of given) {
    const id = Number(m.metadataId ?? 0);
    const f = fields.get(id);
    if (f === undefined)
      return (
        `packet-out metadata id ${id} is not in the P4Info's packet_out ` +
        `(${[...fields].map(([i, x]) => `${i} ${x.name}`).join(", ")})`
      );
    if (out.has(f.name)) return `packet-out metadata ${id} (${f.name}) given twice`;
    const value = m.value === undefined ? undefined : canonicalOf(m.value, f.bits);
    if (value === undefined) return `packet-out metadata ${id} (${f.name}) is not a bytestring of ${f.bits} bits`;
    out.set(f.name, bytestringValue(value));
  }
  const missing = [...fields].filter(([, f]) => !out.has(f.name));
  if (missing.length > 0)
    return (
      `packet-out metadata ${missing.map(([i, f]) => `${i} (${f.name})`).join(", ")} missing (a packet-out ` +
      `carries every field of packet_out)`
    );
  return out;
}

/**
 * A stream's packet-ins on their way to a controller that may read them slower than they come:
 * written while gRPC takes them, held while its buffer is full (write() said false) until it
 * drains, and dropped once `limit` are held.
 */
export class PacketInQueue {
  readonly #stream: Stream;
  readonly #limit: number;
  readonly #held: Response<"StreamChannel">[] = [];
  #full = false;

  constructor(stream: Stream, limit: number) {
    this.#stream = stream;
    this.#limit = limit;
    stream.on("drain", () => {
      this.#full = false;
      while (!this.#full) {
        const m = this.#held.shift();
        if (m === undefined) break;
        this.#write(m);
      }
    });
  }

  #write(m: Response<"StreamChannel">): void {
    if (this.#stream.writableEnded || this.#stream.destroyed) return;
    this.#full = !this.#stream.write(m);
  }

  /** Sends or holds `m`; false when it is dropped (`limit` held already). */
  offer(m: Response<"StreamChannel">): boolean {
    if (!this.#full) this.#write(m);
    else if (this.#held.length < this.#limit) this.#held.push(m);
    else return false;
    return true;
  }

  /** Packet-ins the server holds for the stream: its own, and those in gRPC's buffer. */
  get queued(): number {
    return this.#held.length + this.#stream.writableLength;
  }
}

/** Arbitration verdicts, each told to its stream (§5.2: primary, or a backup with or without a primary). */
export function tellVerdicts(arbiter: Arbiter<Stream>, verdicts: ReturnType<Arbiter<Stream>["leave"]>): void {
  for (const v of verdicts) {
    const c = arbiter.contender(v.stream);
    if (c === undefined) continue;
    const status =
      v.code === Code.OK
        ? { code: Code.OK, message: "primary" }
        : v.code === Code.ALREADY_EXISTS
          ? { code: v.code, message: "backup: another controller is primary" }
          : { code: v.code, message: "backup: there is no primary" };
    const arbitration = {
      deviceId: String(c.deviceId),
      ...(c.role === "" ? {} : { role: { name: c.role } }),
      ...(v.highest !== undefined ? { electionId: toUint128(v.highest) } : {}),
      status,
    };
    if (!v.stream.writableEnded && !v.stream.destroyed) v.stream.write({ arbitration });
  }
}

/** Where a PacketOut enters the emulation (§16.1: its metadata, against the P4Info's packet_out), or what is wrong. */
export function packetOutAt(state: DeviceState, p: p4.v1.PacketOut): Injection | string {
  const payload = p.payload;
  if (payload === undefined || payload.length === 0) return "a packet-out with no payload";
  const meta = packetOutMetadata(state.packetOut, p.metadata ?? []);
  if (typeof meta === "string") return `${meta}; the packet-out is dropped (§16.1)`;
  // packet_out (src/p4/p4info.ts PACKET_OUT): member, kind (1 self, 2 session), session.
  const number = meta.get("member");
  const member = state.dev.members.find((x) => BigInt(x.number) === number);
  if (member === undefined)
    return (
      `packet_out.member ${number ?? "(missing)"} is no member of ` +
      `device ${state.deviceId} (${state.dev.members.map((x) => `${x.number} ${x.member.qualified}`).join(", ")})`
    );
  const kind = meta.get("kind") ?? 0n;
  const session = Number(meta.get("session") ?? 0n);
  if (kind !== 1n && kind !== 2n)
    return `packet_out.kind ${kind} (1: the member sends it, 2: in the session packet_out.session)`;
  if (kind === 2n && member.member.tables.send === undefined)
    return `${member.member.qualified} has no send table: it sends in no session`;
  return kind === 1n
    ? { kind: "self", member: member.member.index, session: 0, link: -1 }
    : { kind: "session", member: member.member.index, session, link: -1 };
}

export interface ServerStats {
  packetOuts: number;
  packetIns: number;
  /** Deliveries with no primary controller on their device to take them. */
  packetInsDropped: number;
  /** Deliveries dropped because their primary's stream already held as many unread packet-ins as it may. */
  packetInsStreamFull: number;
}

/** The counts in words, as the commands print them when they stop. */
export const describeStats = (s: ServerStats): string =>
  `${s.packetOuts} packet-outs, ${s.packetIns} packet-ins (${s.packetInsDropped} with no primary controller to ` +
  `take them, ${s.packetInsStreamFull} dropped while the primary's stream was full)`;
