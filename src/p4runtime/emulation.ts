// What the P4Runtime server needs from a running emulation, behind one small
// interface: table work between packet batches, packets from the controller
// run through the data plane, and the packets it delivers. EngineEmulation is
// that interface on an engine (src/engine/engine.ts): one of its own for
// `strata p4runtime` (local()), or `strata serve --p4runtime`'s. Table work runs
// between batches (Engine.between), so a PacketOut sent after a Write sees that
// Write's tables; every write goes through the engine's ledger (the summary's row hits,
// the control commands and the reconciler read it). Packet-outs enter
// where their member sends, or in its session (an endpoint the engine adds the
// first time one is needed). Deliveries come back in tagged recording records
// (src/wasm/deliveries.ts: member, in-link, bytes), read once per batch.

import type { CompiledSpec } from "../control/compiled.js";
import type { Injection, Installed } from "../control/install.js";
import type { Ledger } from "../control/ledger.js";
import { Engine, type EngineOptions, type EngineOutputs, type TablesListener } from "../engine/engine.js";
import type { Tables } from "../wasm/tables.js";

/** A packet for the data plane: where it enters and its bytes. */
export interface Injected {
  readonly at: Injection;
  readonly data: Uint8Array;
}

/** A packet the data plane delivered to a member (up its stack to the machine). */
export interface Delivery {
  readonly member: number;
  readonly inLink: number;
  readonly data: Uint8Array;
}

export interface ControlledEmulation {
  readonly compiled: CompiledSpec;
  /** Runs `fn` between packet batches, with the data plane's tables (writes go through the ledger as a controller's)
   * and the ledger of what they hold. */
  control<T>(fn: (tables: Tables, ledger: Ledger) => T): Promise<T>;
  /** Runs packets through the data plane, in batches; resolves when they are done. */
  inject(packets: readonly Injected[]): Promise<void>;
  /** Calls `listener` for every delivery; returns the unsubscribe. */
  onDeliver(listener: (d: Delivery) => void): () => void;
  /**
   * Calls `listener` between batches after the tables were written other than through `control`
   * (strata serve's control commands and reloads), with the tables and what is installed; returns the unsubscribe.
   */
  onTablesWritten?(listener: (tables: Tables, installed: Installed) => void): () => void;
  /** Packets carried per link index and delivered per member index since the start. */
  counters(): Promise<{ links: number[]; delivered: number[] }>;
  close(): void;
}

/** What an engine behind a P4Runtime server is opened with: tables that start empty (the server installs the rows). */
export const P4RUNTIME_ENGINE = { emptyTables: true } as const satisfies Partial<EngineOptions>;
/** …and connected with: deliveries reported (PacketIn). */
export const P4RUNTIME_OUTPUTS = { deliveries: true } as const satisfies EngineOutputs;

export class EngineEmulation implements ControlledEmulation {
  readonly compiled: CompiledSpec;
  readonly #engine: Engine;
  /** Whether close() stops the engine: it is this emulation's own. */
  readonly #owned: boolean;
  /** The engine's tables, every write through the engine: noted, and told to every table listener but this one's. */
  readonly #tables: Tables;
  readonly #tableListeners = new Set<(tables: Tables, installed: Installed) => void>();
  readonly #told: TablesListener = (installed) => {
    for (const f of this.#tableListeners) f(this.#tables, installed);
  };

  /** `engine` opened with P4RUNTIME_ENGINE on the whole description (the P4Info is made from it) and connected with
   * P4RUNTIME_OUTPUTS. */
  constructor(engine: Engine, owned = false) {
    this.#engine = engine;
    this.#owned = owned;
    this.compiled = engine.compiled;
    this.#tables = engine.tables("p4runtime", this.#told);
    engine.onTablesWritten(this.#told);
  }

  /** `strata p4runtime`'s: the description on an engine of its own, its rows installed when `filled`, else every table
   * empty. */
  static local(compiled: CompiledSpec, filled = false): EngineEmulation {
    const engine = Engine.open({ compiled, ...(filled ? {} : P4RUNTIME_ENGINE) });
    engine.connect(P4RUNTIME_OUTPUTS);
    return new EngineEmulation(engine, true);
  }

  control<T>(fn: (tables: Tables, ledger: Ledger) => T): Promise<T> {
    return this.#engine.between(() => fn(this.#tables, this.#engine.ledger));
  }

  inject(packets: readonly Injected[]): Promise<void> {
    const em = this.#engine;
    // between(): endpoints are added between batches; the packets then run in batches of their own.
    return em.between(() => {
      for (const p of packets) em.submit(em.endpointAt(p.at, "p4runtime"), p.data);
      em.flush();
    });
  }

  onDeliver(listener: (d: Delivery) => void): () => void {
    return this.#engine.onDeliver((member, inLink, data, start, len) =>
      listener({ member, inLink, data: data.slice(start, start + len) }),
    );
  }

  onTablesWritten(listener: (tables: Tables, installed: Installed) => void): () => void {
    this.#tableListeners.add(listener);
    return () => this.#tableListeners.delete(listener);
  }

  counters(): Promise<{ links: number[]; delivered: number[] }> {
    return this.#engine.between(() => {
      const c = this.#engine.counters();
      return { links: c.linkPackets, delivered: c.delivered };
    });
  }

  close(): void {
    this.#tableListeners.clear();
    if (this.#owned) this.#engine.stop();
  }
}
