// The data plane's own speed: 64-byte packets already in linear memory, one
// core, the whole pipeline per packet (parse, acquire, forward, transmit, link,
// the records of strata run's recordings). The recording ring is emptied, not
// read: writing the files is measured end to end by replay-file.

import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../src/control/compile.js";
import type { CompiledSpec } from "../src/control/compiled.js";
import { type ResolvedEndpoint, resolveEndpoint } from "../src/control/endpoints.js";
import { type Installed, install } from "../src/control/install.js";
import { assignRecordings } from "../src/engine/recordings.js";
import { PcapWriter } from "../src/pcap/index.js";
import { Replay } from "../src/run/replay.js";
import { parseSpec } from "../src/description/load.js";
import { type Build, DataPlane } from "../src/wasm/module.js";
import { type InputBatch, Runner, type Staged } from "../src/wasm/runner.js";
import { interpret, type RefInput } from "../src/model/interpreter.js";
import { fatTreeSpec, hubSpec, l2ExactSpec, routerSpec, vxlanSpec } from "./descriptions.js";
import { BATCH, FRAME_LEN, frames, randomPairs, routedFrames } from "./frames.js";
import type { Scenario } from "./scenario.js";
import { scratchDir } from "./scratch.js";

// What the tests and other benchmarks take from here, where it was first written.
export { fatTreeSpec, hubSpec, l2ExactSpec, mac, routerSpec, vxlanSpec } from "./descriptions.js";
export { frames, randomPairs } from "./frames.js";

/** Packets per timed run: enough batches that call overhead and timer noise vanish. */
const PACKETS = 1 << 20;

export interface Loaded {
  readonly dp: DataPlane;
  readonly compiled: CompiledSpec;
  readonly installed: Installed;
  readonly injections: readonly ResolvedEndpoint[];
  readonly runner: Runner;
  readonly endpoints: readonly number[];
}

/** Compiles and installs `yaml` with injections at `endpoints` (CLI endpoint syntax), on a data plane of build `build`.
 * */
export function load(yaml: string, endpoints: readonly string[], build: Build = "release"): Loaded {
  const compiled = compile(parseSpec(yaml, "bench.yaml"));
  const resolved = endpoints.map((e) => resolveEndpoint(compiled, e));
  const dp = DataPlane.load(build);
  const installed = install(dp, compiled, resolved);
  // The recordings strata run writes, numbered as it numbers them; their records are emptied unread (runStaged).
  const recordings = { count: assignRecordings(compiled, dp).length, write(): void {} };
  const runner = new Runner(dp, { batchPackets: BATCH, maxFanout: compiled.maxFanout }, recordings);
  return { dp, compiled, installed, injections: resolved, runner, endpoints: resolved.map((_, i) => i) };
}

/** Runs a staged batch, numbered from `first`, and empties the recording ring unread: what the data plane does. */
export function runStaged(loaded: Loaded, staged: Staged, first: number): void {
  loaded.runner.go(staged, first, null);
  loaded.dp.exports.recordingsDrained();
}

/** Packets per run of the reference: it is slow by design (tables scanned row by row). */
const REFERENCE_PACKETS = 1 << 13;

export interface Built {
  readonly loaded: Loaded;
  readonly batches: InputBatch[];
}

/** Times the data plane over staged batches; the batches cycle to make PACKETS per run. */
function pipelineScenario(
  name: string,
  description: string,
  build: () => Built,
  referencePackets = REFERENCE_PACKETS,
): Scenario {
  let built: Built | undefined;
  return {
    name,
    description,
    packets: PACKETS,
    setup() {
      built = build();
    },
    run() {
      if (built === undefined) return;
      const { loaded, batches } = built;
      // Staging (one set() per array) is part of the work; reading the records is not.
      for (let done = 0, k = 0; done < PACKETS; k++) {
        const b = batches[k % batches.length];
        if (b === undefined) break;
        runStaged(loaded, loaded.runner.stage(b), done);
        done += b.count;
      }
    },
    reference: referenceScenario(name, build, referencePackets),
  };
}

/** The same tables and packets through the TypeScript interpreter (src/model). */
function referenceScenario(name: string, build: () => Built, packets: number): Scenario {
  let built: Built | undefined;
  let inputs: RefInput[] = [];
  return {
    name: `${name} (reference)`,
    description: `${name} through the TypeScript reference interpreter`,
    packets,
    setup() {
      built = build();
      inputs = [];
      for (const b of built.batches) {
        for (let i = 0; i < b.count && inputs.length < packets; i++) {
          const at = b.offset[i] ?? 0;
          inputs.push({
            bytes: b.data.slice(at, at + (b.capLen[i] ?? 0)),
            origLen: b.origLen[i] ?? 0,
            tsSec: b.tsSec[i] ?? 0,
            tsNsec: b.tsNsec[i] ?? 0,
            endpoint: typeof b.endpoint === "number" ? b.endpoint : (b.endpoint[i] ?? 0),
          });
        }
      }
      while (inputs.length < packets) inputs.push(...inputs.slice(0, packets - inputs.length));
    },
    run() {
      if (built === undefined) return;
      interpret(built.loaded.compiled, built.loaded.injections, inputs, 0, { hopLimit: 64, copyLimit: 4096 });
    },
  };
}

/** The tables and packets of each data-plane scenario, for the bench and for the test that checks their fates. */
export const BUILDS = {
  "l2-exact": (build?: Build): Built => {
    const loaded = load(l2ExactSpec(), ["lan:feed"], build);
    return { loaded, batches: frames(randomPairs(16 * BATCH, 1024), loaded.endpoints) };
  },
  "hub-and-spoke-8": (build?: Build): Built => {
    const loaded = load(
      hubSpec(8),
      Array.from({ length: 8 }, (_, i) => `lan:h${i + 1}.1`),
      build,
    );
    const pairs = randomPairs(16 * BATCH, 8);
    // Each frame enters on its source spoke's link.
    const batches = frames(pairs, loaded.endpoints).map((b, k) => ({
      ...b,
      endpoint: Uint32Array.from({ length: b.count }, (_, i) => (pairs[k * BATCH + i]?.[1] ?? 1) - 1),
    }));
    return { loaded, batches };
  },
  "router-layered": (build?: Build): Built => {
    const loaded = load(routerSpec(), ["lanA:feed"], build);
    return { loaded, batches: routedFrames(16 * BATCH, 1024) };
  },
  vxlan: (build?: Build): Built => {
    const loaded = load(vxlanSpec(), ["tenant:vm3"], build);
    const batches = frames(randomPairs(16 * BATCH, 2), loaded.endpoints).map((b) => {
      for (let i = 0; i < b.count; i++)
        b.data.set([0x02, 0, 0, 0, 0x01, 0x05, 0x02, 0, 0, 0, 0x01, 0x03], i * FRAME_LEN);
      return b;
    });
    return { loaded, batches };
  },
  "l2-exact-64k": (): Built => {
    const loaded = load(l2ExactSpec(65536), ["lan:feed"]);
    return { loaded, batches: frames(randomPairs(64 * BATCH, 65536, 5), loaded.endpoints) };
  },
  "fat-tree": (): Built => {
    const { yaml, hosts, hostsPerPod } = fatTreeSpec();
    const loaded = load(
      yaml,
      Array.from({ length: hosts }, (_, i) => `lan:h${i + 1}.1`),
    );
    // Every frame goes to a host in another pod: host, edge, aggregation, core, aggregation, edge, host (6 links).
    const pairs = randomPairs(64 * BATCH, hosts, 9).map(([dst, src]): [number, number] => {
      const podOf = (h: number): number => Math.floor((h - 1) / hostsPerPod);
      const other = podOf(dst) === podOf(src) ? ((dst - 1 + hostsPerPod) % hosts) + 1 : dst;
      return [other, src];
    });
    const batches = frames(pairs, loaded.endpoints).map((b, k) => ({
      ...b,
      endpoint: Uint32Array.from({ length: b.count }, (_, i) => (pairs[k * BATCH + i]?.[1] ?? 1) - 1),
    }));
    return { loaded, batches };
  },
} as const;

export const l2Exact: Scenario = pipelineScenario(
  "l2-exact",
  "one member, exact match on dst, 1,024 entries; 64-byte frames already in memory",
  BUILDS["l2-exact"],
);

export const l2Exact64k: Scenario = pipelineScenario(
  "l2-exact-64k",
  "l2-exact with 65,536 exact dst rows: what a larger table costs per packet",
  BUILDS["l2-exact-64k"],
  // The reference scans rows one by one: 65,536 per packet.
  256,
);

export const fatTree: Scenario = pipelineScenario(
  "fat-tree",
  "1,169 members (1 core, 16 aggregation, 128 edge switches, 1,024 " +
    "hosts); every frame crosses 6 links to a host in another pod and is " +
    "delivered",
  BUILDS["fat-tree"],
);

export const hubAndSpoke8: Scenario = pipelineScenario(
  "hub-and-spoke-8",
  "8 spokes through a hub: link, acquire, forward, transmit, link, acquire, receive, deliver",
  BUILDS["hub-and-spoke-8"],
);

export const routerLayered: Scenario = pipelineScenario(
  "router-layered",
  "IPv4 router between two Ethernet LANs: pop Ethernet, LPM over 1,024 " +
    "prefixes, TTL − 1, push Ethernet; 64-byte frames",
  BUILDS["router-layered"],
);

// ── End to end ─────────────────────────────────────────────────────────────

const FILE_PACKETS = 1_000_000;

/** A `packets`-frame capture for the l2-exact switch, written once per process in its scratch directory. */
export function replayCapture(packets = FILE_PACKETS): string {
  const path = join(scratchDir(), `replay-${packets}x${FRAME_LEN}.pcap`);
  if (existsSync(path)) return path;
  process.stderr.write(`bench: writing ${path}\n`);
  const partial = `${path}.partial-${process.pid}`;
  const w = new PcapWriter(partial, { linkType: 1, snapLen: 65535 });
  const pairs = randomPairs(packets, 1024, 7);
  for (const b of frames(pairs, [0])) {
    for (let i = 0; i < b.count; i++)
      w.write(
        b.data,
        i * FRAME_LEN,
        FRAME_LEN,
        FRAME_LEN,
        1_700_000_000 + Math.floor((b.tsNsec[i] ?? 0) / 1e6),
        ((b.tsNsec[i] ?? 0) % 1e6) * 1000,
      );
  }
  w.close();
  renameSync(partial, path);
  return path;
}

/** replay-file on `workers` threads (src/run/workers.ts); the threads start in set-up. */
function replayFileScenario(name: string, workers: number, description: string): Scenario {
  let out = "";
  let prepared: Replay | undefined;
  return {
    name,
    description,
    packets: FILE_PACKETS,
    setup() {
      const capture = replayCapture();
      out = mkdtempSync(join(tmpdir(), "strata-bench-out-"));
      const spec = join(out, "l2.yaml");
      writeFileSync(spec, l2ExactSpec());
      prepared = Replay.prepare({
        spec,
        inputs: [{ endpoint: "lan:feed", file: capture }],
        out: join(out, "run"),
        workers,
      });
      if (workers > 1) prepared.run(); // starts the threads, outside the timed runs
    },
    run() {
      const r = prepared?.run();
      if (r?.summary.packets.injected !== FILE_PACKETS)
        throw new Error(`replayed ${r?.summary.packets.injected} packets`);
    },
    teardown() {
      prepared?.close();
      rmSync(out, { recursive: true, force: true });
    },
  };
}

export const replayFile: Scenario = replayFileScenario(
  "replay-file",
  1,
  "1,000,000 64-byte frames from a pcap file through the l2-exact switch " +
    "to per-link pcap files, end to end (the description is loaded once, in " +
    "set-up)",
);

export const replayFile2w: Scenario = replayFileScenario(
  "replay-file-2w",
  2,
  "replay-file on 2 data planes (this thread and a worker thread), in chunks of packets: the same files, byte for byte",
);

export const vxlan: Scenario = pipelineScenario(
  "vxlan",
  "tenant Ethernet over VXLAN over Ethernet: push VXLAN and Ethernet at " +
    "one VTEP, pop both at the other, deliver; 64-byte tenant frames",
  BUILDS.vxlan,
);
