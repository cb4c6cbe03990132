// The P4Runtime server on `strata serve`'s long-running Emulation
// (src/serve/emulation.ts): table work through its between() hook, so a write
// lands between two packet batches of the live ports; packet-outs submitted
// at the endpoints `strata serve --p4runtime` opens for every member
// (`NETWORK:MEMBER`, what the member sends). That emulation writes deliveries
// to capture files, not to listeners, so a server on it sends no PacketIn
// (`strata p4runtime` does).

import type { CompiledSpec } from "../control/compiled.js";
import type { Emulation } from "../serve/emulation.js";
import type { Tables } from "../wasm/tables.js";
import type { ControlledEmulation, Delivery, Injected } from "./emulation.js";

export { withoutRows } from "./emulation.js";

/** The endpoints a served emulation needs for packet-outs: each member's own (`NETWORK:MEMBER`). */
export function packetOutEndpoints(compiled: CompiledSpec): string[] {
  return compiled.members.map((m) => `${compiled.networks[m.network]?.name ?? ""}:${m.key}`);
}

export class ServedEmulation implements ControlledEmulation {
  readonly compiled: CompiledSpec;
  readonly #em: Emulation;
  /** Member index → the emulation's endpoint number of what it sends. */
  readonly #selfEndpoint = new Map<number, number>();

  /** `compiled`: the full description (the P4Info is made from it); the emulation runs it without rows. */
  constructor(em: Emulation, compiled: CompiledSpec) {
    this.#em = em;
    this.compiled = compiled;
    em.endpoints.forEach((e, i) => {
      if (e.kind === "self" && !this.#selfEndpoint.has(e.member)) this.#selfEndpoint.set(e.member, i);
    });
  }

  control<T>(fn: (tables: Tables) => T): Promise<T> {
    return this.#em.between(() => fn(this.#em.installed.tables));
  }

  inject(packets: readonly Injected[]): Promise<void> {
    for (const p of packets) {
      const endpoint = p.at.kind === "self" ? this.#selfEndpoint.get(p.at.member) : undefined;
      if (endpoint === undefined) {
        return Promise.reject(new Error(`under strata serve a packet-out enters where its member sends (packet_out.kind 1), not in a session`));
      }
      this.#em.submit(endpoint, p.data);
    }
    // between() runs once what was submitted before it has run.
    return this.#em.between(() => undefined);
  }

  onDeliver(_listener: (d: Delivery) => void): () => void {
    return () => {};
  }

  counters(): Promise<{ links: number[]; delivered: number[] }> {
    return this.#em.between(() => {
      const x = this.#em.dp.exports;
      return { links: this.compiled.links.map((l) => x.linkPackets(l.index)), delivered: this.compiled.members.map((m) => x.memberDelivered(m.index)) };
    });
  }

  close(): void {}
}
