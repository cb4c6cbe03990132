// The P4Runtime server on `strata serve`'s long-running Emulation
// (src/serve/emulation.ts): table work through its between() hook, so a write
// lands between two packet batches of the live ports, and every write the
// server makes is noted in the emulation's installed rows (the summary's row
// hits and the control commands read them); packet-outs enter where their
// member sends, or in its session (an endpoint the emulation adds the first
// time one is needed); deliveries come back from the emulation's tagged
// delivery captures, read once per batch, as PacketIn.

import type { CompiledSpec } from "../control/compiled.js";
import type { Emulation, EmulationOptions } from "../serve/emulation.js";
import type { Installed } from "../control/install.js";
import type { Tables } from "../wasm/tables.js";
import type { ControlledEmulation, Delivery, Injected } from "./emulation.js";

/** What `strata serve --p4runtime` asks of its emulation: tables that start empty (the server installs the rows), deliveries reported. */
export const SERVED_OPTIONS = { emptyTables: true, deliveries: true } as const satisfies Partial<EmulationOptions>;

export class ServedEmulation implements ControlledEmulation {
  readonly compiled: CompiledSpec;
  readonly #em: Emulation;
  /** The emulation's tables, with every successful write noted in its installed rows. */
  readonly #tables: Tables;

  /** `em` opened with SERVED_OPTIONS on the whole description (the P4Info is made from it). */
  constructor(em: Emulation) {
    this.#em = em;
    this.compiled = em.compiled;
    const tables = em.installed.tables;
    this.#tables = new Proxy(tables, {
      get: (target, key) => {
        if (key === "write") {
          return (writes: Parameters<Tables["write"]>[0]) => {
            const result = target.write(writes);
            em.noteWrites(writes, result);
            return result;
          };
        }
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  control<T>(fn: (tables: Tables) => T): Promise<T> {
    return this.#em.between(() => fn(this.#tables));
  }

  inject(packets: readonly Injected[]): Promise<void> {
    // between(): endpoints are added between batches; the packets then run with the next one.
    return this.#em.between(() => {
      for (const p of packets) this.#em.submit(this.#em.endpointAt(p.at, "p4runtime"), p.data);
      this.#em.flush();
    });
  }

  onDeliver(listener: (d: Delivery) => void): () => void {
    return this.#em.onDeliver((member, inLink, data, start, len) => listener({ member, inLink, data: data.slice(start, start + len) }));
  }

  onTablesWritten(listener: (tables: Tables, installed: Installed) => void): () => void {
    return this.#em.onTablesWritten((installed) => listener(this.#tables, installed));
  }

  counters(): Promise<{ links: number[]; delivered: number[] }> {
    return this.#em.between(() => {
      const x = this.#em.dp.exports;
      return { links: this.compiled.links.map((l) => x.linkPackets(l.index)), delivered: this.compiled.members.map((m) => x.memberDelivered(m.index)) };
    });
  }

  close(): void {}
}
