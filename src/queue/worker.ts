// `strata worker --queue URL`: takes chunk jobs of every run going on (the queues named in RUNS_KEY, looked at every
// POLL_MS) and runs them with the engine every replay uses (./chunk-engine.ts), one engine per run. Each chunk's
// packets are fetched from Redis, its outputs written back there (or under the run's --shared directory when they are
// larger than REDIS_OUTPUTS_MAX), and the job returns where they are. A job of another strata version or protocol, one
// whose description's digest is not its run's, one whose packets do not read back, or one whose description does not
// compile, fails at once (UnrecoverableError: never tried again) with the reason, which the coordinator prints.

import { closeSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { type Job, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { SpecError } from "../description/problems.js";
import { ChunkDamaged, decodeChunk, encodeOutputs, piecesLength } from "./chunk-codec.js";
import { ChunkEngine, type ChunkParts } from "./chunk-engine.js";
import { RangeUnreadable, rangeParts } from "./shared-input.js";
import type { InputBatch } from "../wasm/runner.js";
import {
  type ChunkDone,
  type ChunkJob,
  KEY_TTL_S,
  REDIS_OUTPUTS_MAX,
  refusal,
  SHARED_OUTPUTS_FROM,
  RUNS_KEY,
  runKeys,
  type RunSetup,
  sha256,
} from "./protocol.js";
import { type QueueAddress, setPieces } from "./redis.js";

/** Milliseconds between looks for new runs. */
export const POLL_MS = 250;

export interface WorkerOptions {
  /** Chunks taken at once per run (BullMQ's concurrency): one runs, the next's packets are fetched meanwhile. */
  readonly concurrency: number;
  /**
   * Test tuning: BullMQ's lockDuration, in ms (default 30,000), and its stalledInterval, a quarter of it (default
   * 30,000): a chunk whose worker died is taken again two stalled checks after its lock runs out, within about 1.5
   * times this. A check only finds locks that ran out: looking more often takes no live worker's chunk sooner.
   */
  readonly lockMs?: number;
  /** Where this machine mounts the coordinators' --shared directory, if not at the same path. */
  readonly shared?: string;
  /** Told of each chunk done or refused. */
  readonly log?: (line: string) => void;
}

/** What a worker did, for its last words. */
export interface WorkerStats {
  chunks: number;
  packets: number;
  refused: number;
  runs: Set<string>;
  cpuMs: number;
}

/** A run as this worker knows it: its BullMQ worker, and its setup and engine once fetched. */
interface RunWorker {
  readonly worker: Worker<ChunkJob, ChunkDone>;
  setup?: Promise<{ setup: RunSetup; engine: ChunkEngine }> | undefined;
}

export class QueueWorker {
  readonly stats: WorkerStats = { chunks: 0, packets: 0, refused: 0, runs: new Set(), cpuMs: 0 };
  readonly #address: QueueAddress;
  readonly #redis: Redis;
  readonly #options: WorkerOptions;
  readonly #runs = new Map<string, RunWorker>();
  /** Per engine, the promise its last chunk's outputs are sent (#chunk). */
  readonly #sending = new WeakMap<ChunkEngine, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #looking: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(address: QueueAddress, redis: Redis, options: WorkerOptions) {
    this.#address = address;
    this.#redis = redis;
    this.#options = options;
  }

  /** Starts looking for runs. */
  start(): void {
    const look = (): void => {
      this.#looking = this.#look().catch(() => {}); // Redis away a moment: the next look tries again
      this.#timer = setTimeout(() => void this.#looking.then(look), POLL_MS);
    };
    look();
  }

  /** Stops taking chunks: the chunks being run are finished and their outputs returned first. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#looking;
    await Promise.all([...this.#runs.values()].map((r) => r.worker.close()));
    this.#runs.clear();
  }

  /** Opens a BullMQ worker for each run that started, and closes those of runs that ended. */
  async #look(): Promise<void> {
    const queues = new Set(await this.#redis.smembers(RUNS_KEY));
    if (this.#closed) return;
    for (const [queue, run] of this.#runs)
      if (!queues.has(queue)) {
        this.#runs.delete(queue);
        void run.worker
          .close()
          .then(() => this.#sweep(queue))
          .catch(() => {});
      }
    for (const queue of queues) if (!this.#runs.has(queue)) this.#open(queue);
  }

  /**
   * Deletes what this worker's BullMQ worker wrote for a run after its coordinator removed the run (a stalled check's
   * mark, made by a worker opened as the run ended): the run's keys are gone when its coordinator is.
   */
  async #sweep(queue: string): Promise<void> {
    let cursor = "0";
    do {
      const [next, keys] = await this.#redis.scan(cursor, "MATCH", `bull:${queue}:*`, "COUNT", 1000);
      if (keys.length > 0) await this.#redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  }

  #open(queue: string): void {
    const lock = this.#options.lockMs;
    const worker = new Worker<ChunkJob, ChunkDone>(queue, (job) => this.#chunk(queue, job), {
      connection: this.#address.options,
      concurrency: this.#options.concurrency,
      maxStalledCount: 2,
      ...(lock !== undefined ? { lockDuration: lock, stalledInterval: Math.max(1, Math.round(lock / 4)) } : {}),
    });
    worker.on("error", () => {}); // Redis away a moment: BullMQ reconnects
    this.#runs.set(queue, { worker });
  }

  /** The run's setup, checked, and its engine: fetched and compiled once. */
  #setup(queue: string): Promise<{ setup: RunSetup; engine: ChunkEngine }> {
    const run = this.#runs.get(queue);
    if (run === undefined) throw new Error(`no worker for ${queue}`);
    run.setup ??= (async () => {
      const text = await this.#redis.get(runKeys(queue).setup);
      if (text === null) throw new UnrecoverableError("the run's setup is not in Redis (its coordinator has ended)");
      const setup = JSON.parse(text) as RunSetup;
      const why = refusal(setup, { digest: sha256(setup.description) });
      if (why !== undefined) throw new UnrecoverableError(why);
      try {
        return { setup, engine: new ChunkEngine(setup) };
      } catch (err) {
        if (err instanceof SpecError) throw new UnrecoverableError(err.lines().join("; "));
        throw err;
      }
    })();
    // A setup that failed is fetched again by the next chunk (Redis may have been away).
    run.setup.catch((err: unknown) => {
      if (!(err instanceof UnrecoverableError)) run.setup = undefined;
    });
    return run.setup;
  }

  /** The chunk's packets: its range of a shared capture, then its parts from Redis; refused if they do not read. */
  #parts(
    setup: RunSetup,
    data: ChunkJob,
    payload: Buffer | undefined,
    refuse: (why: string) => UnrecoverableError,
  ): ChunkParts {
    let range: ChunkParts = () => [];
    let parts: InputBatch[] = [];
    try {
      if (data.input !== undefined) {
        if (setup.shared === undefined)
          throw new RangeUnreadable("its job names a shared capture, its run no --shared");
        range = rangeParts(this.#options.shared ?? setup.shared, data.input, setup.trace);
      }
      if (payload !== undefined) parts = decodeChunk(payload);
    } catch (err) {
      if (err instanceof RangeUnreadable) throw refuse(`chunk ${data.chunk}: ${err.message}`);
      if (err instanceof ChunkDamaged) throw refuse(`chunk ${data.chunk}'s packets do not read back: ${err.message}`);
      throw err;
    }
    return function* (engine) {
      yield* range(engine);
      yield* parts;
    };
  }

  async #chunk(queue: string, job: Job<ChunkJob, ChunkDone>): Promise<ChunkDone> {
    const data = job.data;
    const refuse = (why: string): UnrecoverableError => {
      this.stats.refused++;
      this.#options.log?.(`refused chunk ${data.chunk} of ${queue}: ${why}`);
      return new UnrecoverableError(why);
    };
    const { setup, engine } = await this.#setup(queue).catch((err: unknown) => {
      throw err instanceof UnrecoverableError ? refuse(err.message) : err;
    });
    const why = refusal(data, setup);
    if (why !== undefined) throw refuse(why);
    const keys = runKeys(queue);
    const payload = data.sent ? await this.#redis.getBuffer(keys.packets(data.chunk)) : undefined;
    if (payload === null) throw new UnrecoverableError(`chunk ${data.chunk}'s packets are not in Redis`);
    // The engine's buffers hold a chunk's outputs until Redis has them (setPieces sends them uncopied): the next chunk
    // runs on it once they are sent.
    const before = this.#sending.get(engine);
    let sent = (): void => {};
    this.#sending.set(engine, new Promise<void>((resolve) => (sent = resolve)));
    let where: { key: string } | { file: string };
    let bytes: number, cpuMs: number;
    try {
      await before;
      ({ where, bytes, cpuMs } = await this.#runChunk(queue, data, setup, engine, payload, refuse));
    } finally {
      sent();
    }
    this.stats.chunks++;
    this.stats.packets += data.packets;
    this.stats.cpuMs += cpuMs;
    this.stats.runs.add(queue);
    this.#options.log?.(`ran chunk ${data.chunk} of ${queue} (${data.packets} packets)`);
    return { chunk: data.chunk, ...where, bytes, cpuMs };
  }

  /** Runs chunk `data` on `engine` and puts its outputs where the coordinator takes them. */
  async #runChunk(
    queue: string,
    data: ChunkJob,
    setup: RunSetup,
    engine: ChunkEngine,
    payload: Buffer | undefined,
    refuse: (why: string) => UnrecoverableError,
  ): Promise<{ where: { key: string } | { file: string }; bytes: number; cpuMs: number }> {
    const keys = runKeys(queue);
    const cpu = process.cpuUsage();
    const parts = this.#parts(setup, data, payload, refuse);
    let ran;
    try {
      ran = engine.run(parts, data.first, data.updatesBefore);
    } catch (err) {
      if (!(err instanceof RangeUnreadable)) throw err;
      throw refuse(`chunk ${data.chunk}: ${err.message}`);
    }
    if (ran.packets !== data.packets)
      throw refuse(`chunk ${data.chunk} holds ${ran.packets} packets, its job says ${data.packets}`);
    // Views on the engine's buffers, which its next chunk writes over: sent (#chunk holds the next back) or written.
    const outputs = encodeOutputs(ran);
    const bytes = piecesLength(outputs);
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    let where: { key: string } | { file: string };
    const most = setup.shared === undefined ? REDIS_OUTPUTS_MAX : (setup.sharedOutputsFrom ?? SHARED_OUTPUTS_FROM);
    if (bytes <= most) {
      where = { key: keys.outputs(data.chunk) };
      await setPieces(this.#redis, where.key, outputs, KEY_TTL_S);
    } else if (setup.shared !== undefined) {
      // Named under --shared, not by this machine's path: the coordinator may mount it elsewhere.
      where = { file: `${queue}-outputs-${data.chunk}` };
      const path = join(this.#options.shared ?? setup.shared, where.file);
      const partial = `${path}.${process.pid}.part`;
      writePieces(partial, outputs);
      renameSync(partial, path);
    } else {
      throw new UnrecoverableError(
        `chunk ${data.chunk}'s outputs are ${bytes} bytes, more than the ${REDIS_OUTPUTS_MAX} that go ` +
          "through Redis: give the coordinator --shared DIR (a directory every worker can write)",
      );
    }
    return { where, bytes, cpuMs };
  }
}

/** Writes `pieces` end to end into a new file at `path`, not joined first. */
function writePieces(path: string, pieces: readonly Uint8Array[]): void {
  const fd = openSync(path, "w");
  try {
    for (const p of pieces) for (let at = 0; at < p.length;) at += writeSync(fd, p, at, p.length - at);
  } finally {
    closeSync(fd);
  }
}
