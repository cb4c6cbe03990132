// Primary/backup arbitration (P4Runtime spec §5): per device and role, the
// stream with the highest election id the server has seen is the primary.
// The highest id is remembered after its stream ends, so a backup with a lower
// id does not become primary by itself: a controller must come back with an
// id at least as high. A stream keeps the device and role of its first update
// (§5.3: another ends it). Every stream of the device and role hears an update
// that makes or keeps its sender primary, or that takes a primary down;
// otherwise only the sender hears it.

import type { p4 } from "./messages.js";
import { Code } from "./proto.js";

export interface Contender {
  readonly deviceId: number;
  readonly role: string;
  /** Undefined: a backup that never competes. */
  readonly electionId: bigint | undefined;
}

export interface Verdict<S> {
  readonly stream: S;
  /** OK for the primary; ALREADY_EXISTS for a backup while there is a primary; NOT_FOUND while there is none. */
  readonly code: number;
  /** The highest election id seen for the device and role. */
  readonly highest: bigint | undefined;
}

export class Arbiter<S> {
  readonly #streams = new Map<S, Contender>();
  readonly #highest = new Map<string, bigint>();

  #group(c: Contender): string {
    return `${c.deviceId}\u0000${c.role}`;
  }

  /** The primary stream of a device and role, if any. */
  primary(deviceId: number, role: string): S | undefined {
    const key = this.#group({ deviceId, role, electionId: undefined });
    const high = this.#highest.get(key);
    if (high === undefined) return undefined;
    for (const [s, c] of this.#streams) if (this.#group(c) === key && c.electionId === high) return s;
    return undefined;
  }

  primaryElectionId(deviceId: number, role: string): bigint | undefined {
    const s = this.primary(deviceId, role);
    return s === undefined ? undefined : this.#streams.get(s)?.electionId;
  }

  /** Whether a role is one the device has: the default role, or one a stream has arbitrated for (strata has no role
   * configuration to declare others). */
  knows(deviceId: number, role: string): boolean {
    return (
      role === "" ||
      this.#highest.has(this.#group({ deviceId, role, electionId: undefined })) ||
      [...this.#streams.values()].some((c) => c.deviceId === deviceId && c.role === role)
    );
  }

  /**
   * A stream's (first or later) arbitration update. Returns the verdicts to send, or an
   * error that ends the stream (INVALID_ARGUMENT: the id is another stream's; FAILED_PRECONDITION:
   * a stream changes neither device nor role, §5.3).
   */
  update(
    stream: S,
    c: Contender,
  ): { readonly verdicts: Verdict<S>[] } | { readonly code: number; readonly message: string } {
    const before = this.#streams.get(stream);
    if (before !== undefined && before.deviceId !== c.deviceId) {
      return {
        code: Code.FAILED_PRECONDITION,
        message: `this stream arbitrates for device ${before.deviceId}, not ${c.deviceId}`,
      };
    }
    if (before !== undefined && before.role !== c.role) {
      const name = (r: string): string => (r === "" ? "the default role" : `role ${r}`);
      return {
        code: Code.FAILED_PRECONDITION,
        message:
          `this stream arbitrates for ${name(before.role)}, not ${name(c.role)}: open another stream to ` +
          `change role (§5.3)`,
      };
    }
    const key = this.#group(c);
    if (c.electionId !== undefined) {
      for (const [s, o] of this.#streams) {
        if (s !== stream && this.#group(o) === key && o.electionId === c.electionId) {
          return {
            code: Code.INVALID_ARGUMENT,
            message:
              `election id ${c.electionId} is used by another controller of ` +
              `device ${c.deviceId}${c.role === "" ? "" : ` role ${c.role}`}`,
          };
        }
      }
    }
    const oldPrimary = this.primary(c.deviceId, c.role);
    this.#streams.set(stream, c);
    if (c.electionId !== undefined && c.electionId > (this.#highest.get(key) ?? -1n))
      this.#highest.set(key, c.electionId);
    const newPrimary = this.primary(c.deviceId, c.role);
    // §5.3: a primary that stays primary (its own id again) is announced to every controller, as a new one is.
    return {
      verdicts:
        newPrimary === stream || newPrimary !== oldPrimary ? this.#all(c.deviceId, c.role) : [this.#verdict(stream, c)],
    };
  }

  /** A stream ended; the verdicts to send if it was the primary. */
  leave(stream: S): Verdict<S>[] {
    const c = this.#streams.get(stream);
    if (c === undefined) return [];
    const wasPrimary = this.primary(c.deviceId, c.role) === stream;
    this.#streams.delete(stream);
    return wasPrimary ? this.#all(c.deviceId, c.role) : [];
  }

  contender(stream: S): Contender | undefined {
    return this.#streams.get(stream);
  }

  #all(deviceId: number, role: string): Verdict<S>[] {
    const key = this.#group({ deviceId, role, electionId: undefined });
    return [...this.#streams].filter(([, o]) => this.#group(o) === key).map(([s, o]) => this.#verdict(s, o));
  }

  #verdict(stream: S, c: Contender): Verdict<S> {
    const primary = this.primary(c.deviceId, c.role);
    const code = primary === stream ? Code.OK : primary === undefined ? Code.NOT_FOUND : Code.ALREADY_EXISTS;
    return { stream, code, highest: this.#highest.get(this.#group(c)) };
  }
}

/** A p4.v1.Uint128 (64-bit halves as decimal strings, as decoded) as one number. */
export function uint128(v: p4.v1.Uint128 | undefined): bigint | undefined {
  if (v === undefined) return undefined;
  return (BigInt(v.high ?? 0) << 64n) | BigInt(v.low ?? 0);
}

export function toUint128(v: bigint): p4.v1.Uint128 {
  return { high: String(v >> 64n), low: String(v & ((1n << 64n) - 1n)) };
}
