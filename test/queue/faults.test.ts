// strata run --queue when things go wrong: a worker killed (SIGKILL) in the middle of a chunk, its chunk given to
// another by BullMQ's stalled-job check, and the outputs those of one thread; Redis restarted mid-run with its
// append-only file; a chunk whose packets do not read back, a job of another strata and a description that is not its
// digest's, each failing the run once with the reason; a coordinator stopped (Ctrl-C), its jobs and keys removed.
// Each with a Redis and workers of its own.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type QueueRunError, type QueueRunOptions, runQueued } from "../../src/queue/coordinator.js";
import { PROTOCOL, RUNS_KEY, runKeys, type RunSetup } from "../../src/queue/protocol.js";
import { parseQueueUrl } from "../../src/queue/redis.js";
import { replay } from "../../src/run/replay.js";
import { until } from "../helpers/wait.js";
import { concat, payload, pcapFile, type PcapRecordSpec } from "../pcap/builders.js";
import { expectSameFiles, writtenFiles } from "../helpers/outputs.js";
import { redisMissing, TestRedis, TestWorker } from "./servers.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const HUB = join(ROOT, "examples/hub-and-spoke/network.yaml");
/**
 * Lock and stalled-check period of the test's workers, ms: a dead worker's chunk is taken again within seconds. A
 * worker's event loop, which renews its locks, waits while a chunk's work runs synchronously: at load 25 a worker's
 * first chunk (the description compiled, the data plane made) held it past a 1 s lock, the chunk stalled a third time,
 * and BullMQ failed it ("job stalled more than allowable limit"). The worker that is killed keeps the short lock, so
 * its chunk is free soon after it dies.
 */
const LOCK = ["--lock-ms", "4000"];
const SHORT_LOCK = ["--lock-ms", "1000"];
/**
 * Packets of the runs that go to the end: 50 chunks, enough that worker A has one in hand after its third, and that
 * Redis restarts mid-run (after chunk 5: with 30 chunks the restart took 10-15 chunks' time at load 4, and 10-15 were
 * left), as it did with 100.
 */
const PACKETS = 10_000;
const CHUNK = 200;
/**
 * Packets of the runs that fail, or are stopped, before their chunks are all worked (the tampered runs, the coordinator
 * stopped): ten chunks, enough to fail on (chunk 0 is the one tampered) and to stop once six are queued, without
 * queuing the 50 chunks of PACKETS each time.
 */
const FEW = 2_000;

const missing = redisMissing();

describe.skipIf(missing !== undefined)(
  `strata run --queue, faults${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    let scratch = "";
    let capture = "";
    let few = "";
    let redis: TestRedis;
    let workers: TestWorker[] = [];
    let client: Redis;
    let runs = 0;
    const out = (): string => join(scratch, `out-${runs++}`);

    beforeAll(() => {
      scratch = mkdtempSync(join(tmpdir(), "strata-queue-faults-"));
      // Unicast to the four spokes, every seventh frame a broadcast (copied), lengths varied.
      const frames: PcapRecordSpec[] = Array.from({ length: PACKETS }, (_, i) => ({
        sec: 1_700_000_000 + Math.floor(i / 10),
        frac: i % 10,
        data: concat(
          Uint8Array.of(...(i % 7 === 0 ? [255, 255, 255, 255, 255, 255] : [2, 0, 0, 0, 0, 1 + (i % 4)])),
          Uint8Array.of(2, 0, 0, 9, (i >> 8) & 0xff, i & 0xff, 0x08, 0x00),
          payload(46 + ((i * 37) % 200), i),
        ),
      }));
      capture = join(scratch, "frames.pcap");
      writeFileSync(capture, pcapFile({}, frames));
      few = join(scratch, "few.pcap");
      writeFileSync(few, pcapFile({}, frames.slice(0, FEW)));
    });
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    beforeEach(async () => {
      redis = new TestRedis();
      await redis.start();
      client = redis.client();
    });
    afterEach(async () => {
      await Promise.all(workers.map((w) => w.stop("SIGKILL")));
      workers = [];
      client.disconnect();
      await redis.close();
    });

    const options = (dir: string, file = capture): QueueRunOptions => ({
      spec: HUB,
      inputs: [{ endpoint: "lan:h1.1", file }],
      out: dir,
      trace: true,
      tracePackets: [[0, 999]],
      address: parseQueueUrl(redis.url),
      chunkPackets: CHUNK,
    });
    /** The one-thread run's --out. */
    let expected = "";
    const oneThread = (): string => {
      if (expected === "") {
        expected = out();
        replay({ ...options(expected), workers: 1 });
      }
      return expected;
    };
    const started = (...more: string[][]): Promise<TestWorker[]> => {
      const ws = more.map((m) => new TestWorker(redis.url, m));
      workers.push(...ws);
      return Promise.all(ws.map((w) => w.ready()));
    };

    it("a worker killed mid-chunk: its chunk runs on another, the outputs are one thread's", async () => {
      const [a] = await started(SHORT_LOCK);
      let queue = "";
      const dir = out();
      const run = runQueued({ ...options(dir), queued: (q) => (queue = q) });
      await until(
        () => (a?.ran().length ?? 0) >= 3,
        () => `worker A ran no chunks: ${a?.stderr}`,
      );
      // Stopped, then looked at: killed only while a chunk of its is active (locked by it).
      const held = await until(
        async () => {
          a?.process.kill("SIGSTOP");
          const active = await client.lrange(`bull:${queue}:active`, 0, -1);
          if (active.length > 0) return active;
          a?.process.kill("SIGCONT");
          return false;
        },
        () => "worker A never held a chunk",
      );
      await a?.stop("SIGKILL");
      const [b, c] = await started(LOCK, LOCK);
      const result = await run;
      expectSameFiles(dir, oneThread());
      expect(result.chunks).toBe(PACKETS / CHUNK);
      const again = [...(b?.ran() ?? []), ...(c?.ran() ?? [])];
      for (const id of held) expect(again).toContain(Number(id.replace("chunk-", "")));
    });

    const restarted =
      "Redis restarted mid-run (append-only file): the run goes on to one thread's outputs, " +
      "or stops with one line and nothing written";
    it(restarted, async () => {
      const [w] = await started(LOCK);
      const dir = out();
      // The run may end, either way, while Redis restarts: its outcome is taken at once, so that a stop before the
      // test awaits it is no unhandled rejection.
      const outcome = runQueued(options(dir)).then(
        () => undefined,
        (err: unknown) => err,
      );
      await until(
        () => (w?.ran().length ?? 0) >= 5,
        () => `the worker ran no chunks: ${w?.stderr}`,
      );
      await redis.restart();
      const err = await outcome;
      if (err === undefined) expectSameFiles(dir, oneThread());
      else {
        expect((err as QueueRunError).code).toBe(2);
        expect((err as Error).message).not.toContain("\n");
        expect(writtenFiles(dir)).toEqual([]);
      }
    });

    interface Tampered {
      readonly name: string;
      readonly tamper: (queue: string) => Promise<void>;
      readonly reason: RegExp;
      /** The run's --shared (the capture is under it), and the worker's flags beyond LOCK. */
      readonly shared?: boolean;
      readonly worker?: string[];
    }
    const TAMPERED: readonly Tampered[] = [
      {
        name: "a chunk whose packets do not read back",
        tamper: async (q) => {
          await until(
            () => client.exists(runKeys(q).packets(0)),
            () => "chunk 0 never queued",
          );
          await client.set(runKeys(q).packets(0), Buffer.from("damaged"));
        },
        reason: /^chunk 0 failed on a worker: chunk 0's packets do not read back: not a strata chunk of packets$/,
      },
      {
        name: "a job of another strata",
        tamper: async (q) => {
          const setup = JSON.parse((await client.get(runKeys(q).setup)) ?? "") as RunSetup;
          await client.set(runKeys(q).setup, JSON.stringify({ ...setup, version: "0.0.1" }));
        },
        reason: new RegExp(
          String.raw`^chunk \d+ failed on a worker: the job is from strata 0\.0\.1 \(queue protocol ${PROTOCOL}\), ` +
            "this worker is strata ",
        ),
      },
      {
        name: "a description that is not its digest's",
        tamper: async (q) => {
          const setup = JSON.parse((await client.get(runKeys(q).setup)) ?? "") as RunSetup;
          await client.set(
            runKeys(q).setup,
            JSON.stringify({ ...setup, description: `${setup.description}\n# changed` }),
          );
        },
        reason: /^chunk \d+ failed on a worker: the job's description digest [0-9a-f]{12}… is not its run's/,
      },
      {
        name: "a worker that cannot read the --shared capture (mounted elsewhere)",
        shared: true,
        worker: ["--shared", "/nonexistent/strata-shared"],
        tamper: async () => {},
        reason: /^chunk \d+ failed on a worker: chunk \d+: cannot read \/nonexistent\/strata-shared\/few\.pcap: ENOENT/,
      },
    ];

    it.each(TAMPERED)(
      "$name: the run fails once, with the reason, and --out holds nothing of it",
      async ({ tamper, reason, shared, worker }) => {
        const dir = out();
        let queue = "";
        const run = runQueued({
          ...options(dir, few),
          queued: (q) => (queue = q),
          ...(shared === true ? { shared: scratch } : {}),
        });
        run.catch(() => {});
        await until(
          () => queue !== "",
          () => "the run never queued",
        );
        await tamper(queue);
        const [w] = await started([...LOCK, ...(worker ?? [])]);
        const err = (await run.then(
          () => undefined,
          (e: unknown) => e,
        )) as QueueRunError;
        expect(err.message).toMatch(reason);
        expect(err.code).toBe(2);
        // The chunk that failed the run was refused, and the run failed once, with the first refusal's reason.
        const chunk = /^chunk (\d+)/.exec(err.message)?.[1];
        expect(w?.stderr, w?.stderr).toContain(`refused chunk ${chunk} of`);
        expect(writtenFiles(dir)).toEqual([]);
        // Its own stage (beside --out, named after it): another case's, left by a failure, is that case's to report.
        const stage = `.${basename(dir)}.strata-stage-`;
        expect(readdirSync(dirname(dir)).filter((f) => f.startsWith(stage))).toEqual([]);
      },
    );

    it("a coordinator stopped (Ctrl-C): its jobs, keys and name are gone from Redis; --out holds nothing", async () => {
      const dir = out();
      let queue = "";
      let stop = (): void => {};
      const stopped = new Promise<void>((r) => (stop = r));
      const run = runQueued({ ...options(dir, few), queued: (q) => (queue = q), stop: stopped });
      run.catch(() => {});
      await until(
        async () => queue !== "" && (await client.exists(runKeys(queue).packets(5))) === 1,
        () => "the run never queued 6 chunks",
      );
      expect(await client.keys(`bull:${queue}:*`)).not.toEqual([]);
      stop();
      const err = (await run.then(
        () => undefined,
        (e: unknown) => e,
      )) as QueueRunError;
      expect(err.code).toBe(130);
      expect(await client.keys(`*${queue}*`), JSON.stringify(await client.keys(`*${queue}*`))).toEqual([]);
      expect(await client.smembers(RUNS_KEY)).toEqual([]);
      expect(writtenFiles(dir)).toEqual([]);
    });
  },
);
