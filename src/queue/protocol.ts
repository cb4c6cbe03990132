// What a coordinator (`strata run --queue`, ./coordinator.ts) and its workers (`strata worker`, ./worker.ts) say to
// each other through Redis (docs/scale-out.md draws it). Per run: a BullMQ queue of its own (RUN_QUEUE_PREFIX and the
// run's id), named in the set RUNS_KEY while it runs, so that workers find it; the run's setup under one key (the
// description's text and its SHA-256, the endpoints and options); each chunk's packets under a key of their own, and
// each chunk's outputs under another. A job holds only references. Every key of a run expires after KEY_TTL_S, and
// the coordinator deletes them when it ends, however it ends.

import { createHash } from "node:crypto";
import type { Prepared } from "../run/updates.js";
import type { PacketRanges } from "../wasm/runner.js";
import { STRATA_VERSION } from "../version.js";

/**
 * The version of what is written here: a worker runs only a job of its own strata version and protocol. 3: a run's
 * --updates (RunSetup.updates, ChunkJob.updatesBefore).
 */
export const PROTOCOL = 3;
export { STRATA_VERSION };

/** The set of the queues of the runs going on. */
export const RUNS_KEY = "strata:runs";
/** A run's queue: this and the run's id. */
export const RUN_QUEUE_PREFIX = "strata-run-";
/** Seconds a run's keys live, should its coordinator die without deleting them. */
export const KEY_TTL_S = 24 * 3600;
/** Outputs of a chunk at most this many bytes go back through Redis; more go through --shared (docs/scale-out.md). */
export const REDIS_OUTPUTS_MAX = 64 << 20;
/** With --shared, outputs of a chunk larger than this go through a file there: cheaper than Redis both ways. */
export const SHARED_OUTPUTS_FROM = 1 << 20;
/** Tries of a chunk in all: a worker's failure that is not in the chunk (Redis gone a moment) is tried again. */
export const CHUNK_ATTEMPTS = 3;

/** A run's keys, under its queue's name. */
export function runKeys(queue: string): {
  setup: string;
  packets: (chunk: number) => string;
  outputs: (chunk: number) => string;
} {
  return {
    setup: `strata:${queue}:setup`,
    packets: (chunk) => `strata:${queue}:packets:${chunk}`,
    outputs: (chunk) => `strata:${queue}:outputs:${chunk}`,
  };
}

/** What every chunk of a run shares: stored once, fetched once per worker. */
export interface RunSetup {
  readonly protocol: number;
  readonly version: string;
  /** The description's text and its SHA-256 (hex): the worker compiles the text, and checks it first. */
  readonly description: string;
  readonly digest: string;
  /** The description's file as given to the coordinator: in messages, and where its own paths are relative to. */
  readonly spec: string;
  readonly endpoints: readonly string[];
  readonly trace: boolean;
  readonly tracePackets?: PacketRanges;
  readonly hopLimit: number;
  readonly copyLimit: number;
  /** --shared DIR: where inputs' byte ranges are read (InputRange) and outputs above REDIS_OUTPUTS_MAX go. */
  readonly shared?: string;
  /** With --shared, outputs of more bytes go through a file there (SHARED_OUTPUTS_FROM unless a test asks). */
  readonly sharedOutputsFrom?: number;
  /** --updates, checked by the coordinator: each update in order, and the description texts they read, by digest. */
  readonly updates?: { readonly list: readonly Prepared[]; readonly descriptions: readonly [string, string][] };
}

/**
 * The first packets of a chunk as a byte range of a capture under --shared (./shared-input.ts): a classic pcap file
 * whose frames the network takes as they are, read by the worker itself.
 */
export interface InputRange {
  /** The capture's path, relative to --shared. */
  readonly file: string;
  /** The file's first 24 bytes (its pcap header), hex: the worker checks it reads the coordinator's capture. */
  readonly header: string;
  /** Where the range's first record starts, and its bytes (whole records). */
  readonly offset: number;
  readonly length: number;
  readonly packets: number;
}

/** A job: one chunk of packets, by reference. */
export interface ChunkJob {
  readonly protocol: number;
  readonly version: string;
  readonly digest: string;
  readonly chunk: number;
  /** The replay's number of the chunk's first packet. */
  readonly first: number;
  readonly packets: number;
  /** The chunk's first packets, read from --shared; the others (all, without it) are in its packets' key. */
  readonly input?: InputRange;
  /** Whether the chunk has packets under its key (those after `input`'s). */
  readonly sent: boolean;
  /** With --updates: how many of them a one-thread replay applied before the chunk's first packet. */
  readonly updatesBefore?: number;
}

/** What a worker returns for a chunk: where its outputs are (a Redis key, or a file under --shared) and their size. */
export interface ChunkDone {
  readonly chunk: number;
  readonly key?: string;
  /** A file's name in --shared (no directory: each machine mounts --shared where it does). */
  readonly file?: string;
  readonly bytes: number;
  /** CPU milliseconds the worker spent on the chunk (its process's, user and system). */
  readonly cpuMs: number;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Why a worker refuses a job (or a setup) of another strata or another description; undefined if it is its own. */
export function refusal(
  got: { readonly protocol: number; readonly version: string; readonly digest: string },
  want: { readonly digest: string },
): string | undefined {
  if (got.version !== STRATA_VERSION || got.protocol !== PROTOCOL)
    return (
      `the job is from strata ${got.version} (queue protocol ${got.protocol}), ` +
      `this worker is strata ${STRATA_VERSION} ` +
      `(protocol ${PROTOCOL}): run workers of the coordinator's version`
    );
  if (got.digest !== want.digest)
    return `the job's description digest ${got.digest.slice(0, 12)}… is not its run's (${want.digest.slice(0, 12)}…)`;
  return undefined;
}
