// strata run --queue writes what strata run writes, byte for byte (summary.json apart from its timing), with its
// chunks run by two `strata worker` processes through a Redis of the test's own: on the examples, on the real
// captures merged (a damaged one among them: the same error), with a trace of some packets; and it refuses what
// strata run refuses, with the same lines, before anything is queued, as it refuses a bad --queue.

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { runQueued } from "../../src/queue/coordinator.js";
import { RUNS_KEY } from "../../src/queue/protocol.js";
import { parseQueueUrl } from "../../src/queue/redis.js";
import { replay } from "../../src/run/replay.js";
import type { PacketRanges } from "../../src/wasm/runner.js";
import { until } from "../helpers/wait.js";
import { expectSameFiles } from "../helpers/outputs.js";
import { freePort, redisMissing, TestRedis, TestWorker } from "./servers.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const REAL = join(ROOT, "test/fixtures/pcaps-real");
const HUB = join(ROOT, "examples/hub-and-spoke/network.yaml");

function example(name: string): { spec: string; inputs: { endpoint: string; file: string }[] } {
  const dir = join(ROOT, "examples", name);
  const e = JSON.parse(readFileSync(join(dir, "example.json"), "utf8")) as { inputs: string[] };
  return {
    spec: join(dir, "network.yaml"),
    inputs: e.inputs.map((i) => {
      const eq = i.indexOf("=");
      return { endpoint: i.slice(0, eq), file: join(ROOT, i.slice(eq + 1)) };
    }),
  };
}

interface Case {
  readonly name: string;
  readonly spec: string;
  readonly inputs: { endpoint: string; file: string }[];
  readonly trace?: boolean;
  readonly tracePackets?: PacketRanges;
  readonly chunkPackets: number;
  /** The inputs' errors, as strata run reports them. */
  readonly errors: number;
  /** With --shared DIR (the inputs copied there first), and whether every packet is then read there by the workers
   * (none sent through Redis). */
  readonly shared?: boolean;
  readonly ranges?: boolean;
  /** --updates FILE. */
  readonly updates?: string;
}

const UPDATES = join(ROOT, "test/fixtures/updates");

const CASES: readonly Case[] = [
  ...["gre", "vxlan", "bridged-lans", "hub-and-spoke", "ip-router"].map((name) => ({
    name: `example ${name}, traced`,
    ...example(name),
    trace: true,
    chunkPackets: 3,
    errors: 0,
  })),
  {
    name: "the real captures merged into the hub, a damaged one among them",
    spec: HUB,
    inputs: [
      "pcapfix_test_damaged.pcap",
      "various_gre.pcap",
      "pptp.pcap",
      "dns_udp.pcap",
      "icmpv6.pcap",
      "802.1ad_QinQ.pcap",
    ].map((f, k) => ({
      endpoint: `lan:h${(k % 4) + 1}.1`,
      file: join(REAL, f),
    })),
    trace: true,
    chunkPackets: 50,
    errors: 1,
  },
  ...[true, false].map((trace) => ({
    name: `a capture under --shared, read there by the workers${trace ? ", traced (as batches)" : " (in blocks)"}`,
    spec: HUB,
    inputs: [{ endpoint: "lan:h2.1", file: join(REAL, "various_gre.pcap") }],
    trace,
    chunkPackets: 7,
    errors: 0,
    shared: true,
    ranges: true,
  })),
  {
    name: "a damaged capture under --shared: ranges up to the damage, the rest sent, the same error",
    spec: HUB,
    inputs: [{ endpoint: "lan:h1.1", file: join(REAL, "pcapfix_test_damaged.pcap") }],
    chunkPackets: 5,
    errors: 1,
    shared: true,
  },
  {
    name: "example ip-router with --updates (a route withdrawn and back), a chunk a packet, traced",
    ...example("ip-router"),
    updates: join(UPDATES, "ip-router-route.yaml"),
    trace: true,
    chunkPackets: 1,
    errors: 0,
  },
  {
    name: "example hub-and-spoke with --updates (a link down and up), under --shared (sent, not ranges), traced",
    ...example("hub-and-spoke"),
    updates: join(UPDATES, "hub-link.yaml"),
    trace: true,
    chunkPackets: 1,
    errors: 0,
    shared: true,
  },
  {
    name: "example vxlan, packets 2-9 traced",
    ...example("vxlan"),
    tracePackets: [[2, 9]],
    chunkPackets: 4,
    errors: 0,
  },
];

const missing = redisMissing();

describe.skipIf(missing !== undefined)(
  `strata run --queue${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    const redis = new TestRedis();
    const workers: TestWorker[] = [];
    let scratch = "";
    let runs = 0;
    const out = (): string => join(scratch, `out-${runs++}`);

    beforeAll(async () => {
      scratch = mkdtempSync(join(tmpdir(), "strata-queue-"));
      await redis.start();
      workers.push(new TestWorker(redis.url), new TestWorker(redis.url));
      await Promise.all(workers.map((w) => w.ready()));
    });
    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await redis.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    it.each(CASES)("$name: what one thread writes", async (c) => {
      const shared = join(scratch, "shared");
      if (c.shared === true) mkdirSync(shared, { recursive: true });
      const inputs =
        c.shared === true
          ? c.inputs.map((i) => {
              const file = join(shared, basename(i.file));
              copyFileSync(i.file, file);
              return { ...i, file };
            })
          : c.inputs;
      const options = {
        spec: c.spec,
        inputs,
        ...(c.trace === true ? { trace: true } : {}),
        ...(c.tracePackets !== undefined ? { tracePackets: c.tracePackets } : {}),
        ...(c.updates !== undefined ? { updates: c.updates } : {}),
      };
      const one = replay({ ...options, out: out(), workers: 1 });
      const dir = out();
      const queued = await runQueued({
        ...options,
        out: dir,
        address: parseQueueUrl(redis.url),
        chunkPackets: c.chunkPackets,
        // Every chunk's outputs through a file under --shared (a test's are far below SHARED_OUTPUTS_FROM).
        ...(c.shared === true ? { shared, sharedOutputsFrom: 0 } : {}),
      });
      expectSameFiles(dir, join(scratch, `out-${runs - 2}`));
      expect(queued.errors.map((e) => e.message)).toEqual(one.errors.map((e) => e.message));
      expect(queued.errors).toHaveLength(c.errors);
      expect(queued.chunks).toBe(Math.ceil(one.summary.packets.injected / c.chunkPackets));
      if (c.ranges === true) expect(queued.sent.packets).toBe(0);
      if (c.shared !== true) expect(queued.sent.packets).toBeGreaterThan(0);
      // The outputs' files taken from --shared, and removed.
      if (c.shared === true) expect(readdirSync(shared).filter((f) => f.includes("outputs"))).toEqual([]);
    });

    it("the chunks were shared: each worker ran some", () => {
      for (const w of workers) expect(w.ran().length, w.stderr).toBeGreaterThan(0);
    });

    it("nothing of the runs is left in Redis", async () => {
      const r = redis.client();
      try {
        // The coordinator removes its run's name, keys and queue before it returns: at once. A worker that had the
        // run's queue open deletes what its BullMQ worker wrote there once it sees the run gone (its next look,
        // src/queue/worker.ts): waited for.
        expect(await r.smembers(RUNS_KEY)).toEqual([]);
        expect(await r.keys("strata:strata-run-*")).toEqual([]);
        let left: string[] = [];
        await until(
          async () => (left = await r.keys("*strata-run-*")).length === 0,
          () => `left in Redis: ${left.join(", ")}`,
        );
      } finally {
        r.disconnect();
      }
    });

    /** `strata run ARGS` and `strata run ARGS --queue URL`: exit code and stderr. */
    async function both(args: readonly string[]): Promise<{ code: number; stderr: string }[]> {
      return Promise.all(
        [[], ["--queue", redis.url]].map(async (more) => {
          const io = memoryIo();
          const code = await main(["run", ...args, ...more], io);
          return { code, stderr: io.stderr.text };
        }),
      );
    }

    const hub = example("hub-and-spoke");
    const ins = hub.inputs.flatMap((i) => ["--in", `${i.endpoint}=${i.file}`]);
    const REFUSED: readonly { name: string; args: () => string[] }[] = [
      { name: "a description that is not there", args: () => [join(scratch, "none.yaml"), ...ins, "--out", out()] },
      { name: "--out over an input", args: () => [hub.spec, ...ins, "--out", join(ROOT, "examples/hub-and-spoke")] },
      { name: "an --in without =", args: () => [hub.spec, "--in", "lan:h1.1", "--out", out()] },
      {
        name: "an endpoint the description lacks",
        args: () => [hub.spec, "--in", `lan:h9.1=${hub.inputs[0]?.file}`, "--out", out()],
      },
      { name: "a capture that is not one", args: () => [hub.spec, "--in", `lan:h1.1=${hub.spec}`, "--out", out()] },
      { name: "--max-classes without --analyze", args: () => [hub.spec, ...ins, "--out", out(), "--max-classes", "5"] },
      { name: "an updates file not there", args: () => [hub.spec, ...ins, "--out", out(), "--updates", scratch] },
      {
        name: "an update of a link the description lacks",
        args: () => [hub.spec, ...ins, "--out", out(), "--updates", join(UPDATES, "ip-router-link.yaml")],
      },
    ];

    it.each(REFUSED)("$name: refused as strata run refuses it, nothing queued", async ({ args }) => {
      const [plain, queued] = await both(args());
      expect(plain?.code).toBe(2);
      expect(queued).toEqual(plain);
      expect(queued?.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
      const r = redis.client();
      try {
        expect(await r.keys("*strata-run-*")).toEqual([]);
      } finally {
        r.disconnect();
      }
    });

    const BAD: readonly { name: string; args: () => Promise<string[]>; line: RegExp }[] = [
      {
        name: "a --queue that is not Redis's",
        args: async () => ["run", hub.spec, ...ins, "--out", out(), "--queue", "http://127.0.0.1:6379"],
        line: new RegExp(
          String.raw`^strata: --queue http://127\.0\.0\.1:6379: http:// is not Redis's ` +
            String.raw`\(give redis://HOST:PORT\[/DB\]`,
        ),
      },
      {
        name: "a Redis that does not answer",
        args: async () => ["run", hub.spec, ...ins, "--out", out(), "--queue", `redis://127.0.0.1:${await freePort()}`],
        line: new RegExp(
          String.raw`^strata: --queue redis://127\.0\.0\.1:\d+: Redis does not answer: .*ECONNREFUSED.* ` +
            String.raw`\(start redis-server there`,
        ),
      },
      {
        name: "--workers with --queue",
        args: async () => ["run", hub.spec, ...ins, "--out", out(), "--workers", "2", "--queue", redis.url],
        line: /^strata: --workers is not taken with --queue: /,
      },
      {
        name: "--shared without --queue",
        args: async () => ["run", hub.spec, ...ins, "--out", out(), "--shared", scratch],
        line: /^strata: --shared is taken only with --queue/,
      },
      {
        name: "a worker of a Redis that does not answer",
        args: async () => ["worker", "--queue", `redis://127.0.0.1:${await freePort()}`],
        line: /^strata: --queue redis:\/\/127\.0\.0\.1:\d+: Redis does not answer: /,
      },
      {
        name: "a worker of a bad database",
        args: async () => ["worker", "--queue", `${redis.url}/x`],
        line: /^strata: --queue redis:\/\/127\.0\.0\.1:\d+\/x: \/x is not a database number/,
      },
    ];

    it.each(BAD)("$name: one line, exit 2", async ({ args, line }) => {
      const io = memoryIo();
      expect(await main(await args(), io)).toBe(2);
      const lines = io.stderr.text.split("\n").filter((l) => l !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
    });
  },
);
