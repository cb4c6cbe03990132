// What the P4Runtime server needs from a running emulation, behind one small
// interface: table work between packet batches, packets from the controller
// run through the data plane, and the packets it delivers. LocalEmulation is
// the plain implementation — a data plane, its tables installed from the
// description (or left empty), and a FIFO of jobs run one after another on
// the event loop, so a control job never runs while a batch is in the data
// plane and a PacketOut sent after a Write sees that Write's tables. Its
// tables start empty: the server installs rows itself. Deliveries come back in
// tagged capture records (src/wasm/deliveries.ts: member, in-link, bytes), read
// once per batch. `strata serve`'s long-running emulation stands behind the
// same interface (./serve-emulation.ts).

import type { CompiledSpec } from "../control/compiled.js";
import { type Injection, type Installed, install, withoutRows } from "../control/install.js";
import { INJECT_KINDS } from "../wasm/abi.js";
import { DeliveryCaptures } from "../wasm/deliveries.js";
import { DataPlane } from "../wasm/module.js";
import { DEFAULT_RUNNER, type InputBatch, Runner } from "../wasm/runner.js";
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
  /** Runs `fn` between packet batches, with the data plane's tables. */
  control<T>(fn: (tables: Tables) => T): Promise<T>;
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

/** The description with every table empty: the server installs the rows (the export's, or a controller's). */
export { withoutRows } from "../control/install.js";

/** Injection endpoints set aside for a batch: packets entering at more distinct places take more batches. */
const ENDPOINT_SLOTS = 64;

export class LocalEmulation implements ControlledEmulation {
  readonly compiled: CompiledSpec;
  readonly #dp: DataPlane;
  readonly #tables: Tables;
  readonly #runner: Runner;
  readonly #listeners = new Set<(d: Delivery) => void>();
  #queue: Promise<unknown> = Promise.resolve();
  #packets = 0;

  /** The description's topology with every table created empty: the server installs the rows. */
  constructor(compiled: CompiledSpec) {
    const start = withoutRows(compiled);
    this.compiled = compiled;
    this.#dp = DataPlane.load();
    const slots: Injection[] = Array.from({ length: ENDPOINT_SLOTS }, () => ({ kind: "self", member: 0, session: 0, link: -1 }));
    this.#tables = install(this.#dp, start, slots).tables;
    // Deliveries come back in tagged capture records (member, in-link, bytes), read once per batch.
    const captures = new DeliveryCaptures(this.#dp, compiled, (member, inLink, data, start, len) => {
      for (const l of this.#listeners) l({ member, inLink, data: data.slice(start, start + len) });
    });
    this.#runner = new Runner(this.#dp, { trace: false, maxFanout: compiled.maxFanout, slotLenMax: 65535 + DEFAULT_RUNNER.headroom }, captures);
    this.#dp.exports.countersReset();
  }

  #job<T>(fn: () => T): Promise<T> {
    const next = this.#queue.then(fn);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  control<T>(fn: (tables: Tables) => T): Promise<T> {
    return this.#job(() => fn(this.#tables));
  }

  inject(packets: readonly Injected[]): Promise<void> {
    return this.#job(() => {
      for (let i = 0; i < packets.length; ) {
        const batch = this.#batch(packets, i);
        this.#run(batch.packets, batch.places);
        i += batch.packets.length;
      }
    });
  }

  /** The longest run of packets from `from` that fits one batch: its packets, and its endpoints set. */
  #batch(packets: readonly Injected[], from: number): { packets: Injected[]; places: number[] } {
    const keys = new Map<string, number>();
    const out: Injected[] = [];
    const places: number[] = [];
    const x = this.#dp.exports;
    for (let i = from; i < packets.length && out.length < DEFAULT_RUNNER.batchPackets; i++) {
      const p = packets[i];
      if (p === undefined) break;
      const key = `${p.at.kind}:${p.at.member}:${p.at.session}:${p.at.link}`;
      let slot = keys.get(key);
      if (slot === undefined) {
        if (keys.size === ENDPOINT_SLOTS) break;
        slot = keys.size;
        keys.set(key, slot);
        x.endpointSet(slot, INJECT_KINDS.indexOf(p.at.kind), p.at.member, p.at.session, p.at.link);
      }
      out.push(p);
      places.push(slot);
    }
    return { packets: out, places };
  }

  #run(packets: readonly Injected[], places: readonly number[]): void {
    const n = packets.length;
    const total = packets.reduce((a, p) => a + p.data.length, 0);
    const data = new Uint8Array(Math.max(total, 1));
    const offset = new Uint32Array(n);
    const capLen = new Uint32Array(n);
    let at = 0;
    packets.forEach((p, i) => {
      data.set(p.data, at);
      offset[i] = at;
      capLen[i] = p.data.length;
      at += p.data.length;
    });
    const now = Date.now();
    const batch: InputBatch = {
      data,
      count: n,
      offset,
      capLen,
      origLen: capLen.slice(),
      tsSec: new Float64Array(n).fill(Math.floor(now / 1000)),
      tsNsec: new Uint32Array(n).fill((now % 1000) * 1e6),
      endpoint: Uint32Array.from(places),
    };
    this.#runner.run(batch, this.#packets, null);
    this.#runner.flushRecordings();
    this.#packets += n;
  }

  onDeliver(listener: (d: Delivery) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  counters(): Promise<{ links: number[]; delivered: number[] }> {
    return this.#job(() => {
      const x = this.#dp.exports;
      return {
        links: this.compiled.links.map((l) => x.linkPackets(l.index)),
        delivered: this.compiled.members.map((m) => x.memberDelivered(m.index)),
      };
    });
  }

  close(): void {
    this.#listeners.clear();
  }
}
