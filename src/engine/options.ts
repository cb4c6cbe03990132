// What an engine (./engine.ts) is opened with and connected to, and the small
// parts it is made of: per-endpoint input counts, listener lists, and the
// tables a writer between batches is handed.

import type { CompiledNetwork, CompiledSpec } from "../control/compiled.js";
import type { Injection, Installed } from "../control/install.js";
import type { DataPlane } from "../wasm/module.js";
import type { PacketRanges, RunnerOptions } from "../wasm/runner.js";
import { type TableWrite, Tables, type WriteResult } from "../wasm/tables.js";
import type { RecordingSink } from "./sinks.js";
import type { InputStats } from "./summary.js";
import type { TraceLines } from "./trace-file.js";

export interface EngineOptions {
  /** The description. With emptyTables its tables start empty, and it stays the description rows are named by. */
  readonly compiled: CompiledSpec;
  /**
   * Where packets enter, in the ENDPOINT forms of `strata run --in` (src/control/endpoints.ts):
   * run()'s and submit()'s endpoint numbers index this list (endpointAt() adds to it).
   */
  readonly endpoints?: readonly string[];
  /** What each endpoint's packets come from, for the summary's `inputs[].file` (an interface, a socket). */
  readonly sources?: readonly string[];
  /**
   * Start with every table empty (a controller installs the rows): `installed.entries` maps each
   * of the description's rows to −1 until a write puts it in.
   */
  readonly emptyTables?: boolean;
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** Packets per batch (default DEFAULT_RUNNER.batchPackets). */
  readonly batchPackets?: number;
  /**
   * The data plane's buffers, DEFAULT_RUNNER's where not given (packet buffers still grow for a long packet):
   * smaller ones make a run pause and resume more often, as the differential tests want it to.
   */
  readonly buffers?: Partial<
    Pick<RunnerOptions, "batchBytes" | "slots" | "slotLen" | "recordingBytes" | "traceEvents">
  >;
  /** How long submit() holds a partial batch before running it, in ms (default 1; 0: until the frames that arrived in
   * the same turn of the event loop are in). */
  readonly flushMs?: number;
}

/** What the data plane writes, and where it goes (connect()). */
export interface EngineOutputs {
  /** Where the description's recordings go (--out's RecordingFiles, a worker's chunk buffers); none: not recorded. */
  readonly recordings?: RecordingSink;
  /** Hand packets leaving on external links to onExit listeners, after each batch. */
  readonly exits?: boolean;
  /** Hand every delivery to onDeliver listeners, with the in-link it came on, after each batch. */
  readonly deliveries?: boolean;
  readonly trace?: EngineTrace;
}

/** The hop-by-hop trace (./trace.ts): one line per packet to `lines`. */
export interface EngineTrace {
  readonly lines: TraceLines;
  /** Only these packets (numbered as they came) are traced; all when not given. */
  readonly packets?: PacketRanges;
  /** Asked after each batch: true ends the trace there (its lines whole), the engine runs on untraced, and `onFull` is
   * called. */
  readonly full?: () => boolean;
  readonly onFull?: () => void;
}

/** Told, between batches, that the tables changed; `installed` says what is there now. */
export type TablesListener = (installed: Installed) => void;

/** The wall clock, to the microsecond or better: seconds and nanoseconds. */
export function wallClock(): [number, number] {
  const ms = performance.timeOrigin + performance.now();
  const sec = Math.floor(ms / 1000);
  return [sec, Math.min(999_999_999, Math.round((ms - sec * 1000) * 1e6))];
}

export function inputStats(endpoint: string, file: string): InputStats {
  return { endpoint, file, packets: 0, error: undefined, linkTypes: new Set<string>(), adapted: new Set<string>() };
}

export function subscribe<T>(list: T[], listener: T): () => void {
  list.push(listener);
  return () => {
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  };
}

/** Tables whose writes go through the engine (Engine.tables()). */
export class EngineTables extends Tables {
  readonly #write: (writes: readonly TableWrite[]) => WriteResult;

  constructor(dp: DataPlane, write: (writes: readonly TableWrite[]) => WriteResult) {
    super(dp);
    this.#write = write;
  }

  override write(writes: readonly TableWrite[]): WriteResult {
    return this.#write(writes);
  }
}

/** The text and network of an endpoint added at run time (Engine.endpointAt): a session, a member, or a link. */
export function addedEndpoint(compiled: CompiledSpec, at: Injection): { text: string; network: CompiledNetwork } {
  const member = compiled.members[at.member];
  const network = compiled.networks[member?.network ?? -1] ?? compiled.networks[0];
  if (network === undefined) throw new Error("the description has no network");
  const link = compiled.links[at.link];
  const where =
    at.kind === "session"
      ? `${member?.key ?? ""}@${at.session}`
      : at.kind === "self"
        ? (member?.key ?? "")
        : (link?.external ?? `${link?.qualified ?? ""}`);
  return { text: `${network.name}:${where}`, network };
}
