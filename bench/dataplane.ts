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
import type { Scenario } from "./scenario.js";
import { scratchDir } from "./scratch.js";

const FRAME_LEN = 64;
const BATCH = 256;
/** Packets per timed run: enough batches that call overhead and timer noise vanish. */
const PACKETS = 1 << 20;

export const mac = (i: number): string =>
  ["02", "00", (i >>> 24) & 0xff, (i >>> 16) & 0xff, (i >>> 8) & 0xff, i & 0xff]
    .map((b) => (typeof b === "string" ? b : b.toString(16).padStart(2, "0")))
    .join(":");

/** 64-byte Ethernet frames, dst/src given as MAC indices; batches of BATCH packets. */
export function frames(pairs: readonly (readonly [number, number])[], endpoints: readonly number[]): InputBatch[] {
  const batches: InputBatch[] = [];
  for (let start = 0; start < pairs.length; start += BATCH) {
    const n = Math.min(BATCH, pairs.length - start);
    const data = new Uint8Array(n * FRAME_LEN);
    for (let i = 0; i < n; i++) {
      const [dst, src] = pairs[start + i] ?? [0, 0];
      const f = data.subarray(i * FRAME_LEN, (i + 1) * FRAME_LEN);
      f.set([0x02, 0, (dst >>> 24) & 0xff, (dst >>> 16) & 0xff, (dst >>> 8) & 0xff, dst & 0xff], 0);
      f.set([0x02, 0, (src >>> 24) & 0xff, (src >>> 16) & 0xff, (src >>> 8) & 0xff, src & 0xff], 6);
      f[12] = 0x08;
      f[13] = 0x00;
      f[14] = 0x45;
    }
    batches.push({
      data,
      count: n,
      offset: Uint32Array.from({ length: n }, (_, i) => i * FRAME_LEN),
      capLen: new Uint32Array(n).fill(FRAME_LEN),
      origLen: new Uint32Array(n).fill(FRAME_LEN),
      tsSec: new Float64Array(n).fill(1_700_000_000),
      tsNsec: Uint32Array.from({ length: n }, (_, i) => start + i),
      endpoint: Uint32Array.from({ length: n }, (_, i) => endpoints[(start + i) % endpoints.length] ?? 0),
    });
  }
  return batches;
}

/** A switch `sw` with 1,024 exact dst rows spread over 4 external out-links, fed from outside. */
export function l2ExactSpec(entries = 1024, ports = 4): string {
  const rows = Array.from(
    { length: entries },
    (_, i) => `          - { match: { dst: "${mac(i + 1)}" }, out: ${(i % ports) + 1} }`,
  );
  const out = Array.from({ length: ports }, (_, p) => `      - { from: sw.${p + 1}, external: out${p + 1} }`);
  return `networks:
  lan:
    header: ethernet
    members:
      sw: { name: "02:00:ff:ff:ff:fe", role: infra }
    links:
      - { external: feed, to: sw.0, record: false }
${out.join("\n")}
    tables:
      sw:
        acquire: [ { do: forward } ]
        forward:
${rows.join("\n")}
`;
}

/** Hub and spoke with `n` spokes: the hub forwards by dst, each spoke receives its own frames. */
export function hubSpec(n: number): string {
  const hosts = Array.from({ length: n }, (_, i) => `      h${i + 1}: { name: "${mac(i + 1)}" }`);
  const links = Array.from({ length: n }, (_, i) => `      - { from: h${i + 1}.1, to: hub.${i + 1}, mode: two-way }`);
  const fwd = Array.from({ length: n }, (_, i) => `          - { match: { dst: "${mac(i + 1)}" }, out: ${i + 1} }`);
  const hostTables = Array.from(
    { length: n },
    (_, i) =>
      `      h${i + 1}:\n        acquire: [ { match: { dst: "${mac(i + 1)}" }, do: receive } ]\n` +
      `        receive: [ { do: deliver } ]`,
  );
  return `networks:
  lan:
    header: ethernet
    members:
      hub: { name: "02:00:ff:ff:ff:fe", role: infra }
${hosts.join("\n")}
    links:
${links.join("\n")}
    tables:
      hub:
        acquire: [ { do: forward } ]
        forward:
${fwd.join("\n")}
${hostTables.join("\n")}
`;
}

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

/** Random (dst, src) MAC index pairs: dst in 1..n, src ≠ dst. */
export function randomPairs(count: number, n: number, seed = 1): [number, number][] {
  let s = seed;
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8;
  return Array.from({ length: count }, () => {
    const dst = (next() % n) + 1;
    const src = ((dst + (next() % (n - 1))) % n) + 1;
    return [dst, src] as [number, number];
  });
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

/**
 * A three-tier tree of Ethernet switches: `pods` aggregation switches under one
 * core, `edges` edge switches per pod, `hosts` hosts per edge switch (1,169
 * members with the defaults). Each switch forwards by dst: the core by an exact
 * row per host, an aggregation or edge switch by a row per host below it, then
 * a catch-all row up. Hosts receive their own frames.
 */
export function fatTreeSpec(pods = 16, edges = 8, hosts = 8): { yaml: string; hosts: number; hostsPerPod: number } {
  const nHosts = pods * edges * hosts;
  const hostPerPod = edges * hosts;
  const sw = (k: number): string => mac(0x01000000 + k);
  const members: string[] = [`      core: { name: "${sw(0)}", role: infra }`];
  const links: string[] = [];
  const tables: string[] = [];
  const coreRows: string[] = [];
  for (let p = 0; p < pods; p++) {
    members.push(`      a${p + 1}: { name: "${sw(1 + p)}", role: infra }`);
    links.push(`      - { from: a${p + 1}.${edges + 1}, to: core.${p + 1}, mode: two-way }`);
    const aggRows: string[] = [];
    for (let e = 0; e < edges; e++) {
      const ge = p * edges + e;
      members.push(`      e${ge + 1}: { name: "${sw(1 + pods + ge)}", role: infra }`);
      links.push(`      - { from: e${ge + 1}.${hosts + 1}, to: a${p + 1}.${e + 1}, mode: two-way }`);
      const edgeRows: string[] = [];
      for (let h = 0; h < hosts; h++) {
        const n = ge * hosts + h + 1;
        members.push(`      h${n}: { name: "${mac(n)}" }`);
        links.push(`      - { from: h${n}.1, to: e${ge + 1}.${h + 1}, mode: two-way }`);
        tables.push(
          `      h${n}:\n        acquire: [ { match: { dst: "${mac(n)}" }, do: receive } ]\n` +
            `        receive: [ { do: deliver } ]`,
        );
        edgeRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${h + 1} }`);
        aggRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${e + 1} }`);
        coreRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${p + 1} }`);
      }
      edgeRows.push(`          - { out: ${hosts + 1} }`);
      tables.push(`      e${ge + 1}:\n        acquire: [ { do: forward } ]\n        forward:\n${edgeRows.join("\n")}`);
    }
    aggRows.push(`          - { out: ${edges + 1} }`);
    tables.push(`      a${p + 1}:\n        acquire: [ { do: forward } ]\n        forward:\n${aggRows.join("\n")}`);
  }
  tables.push(`      core:\n        acquire: [ { do: forward } ]\n        forward:\n${coreRows.join("\n")}`);
  const yaml = `networks:
  lan:
    header: ethernet
    members:
${members.join("\n")}
    links:
${links.join("\n")}
    tables:
${tables.join("\n")}
`;
  return { yaml, hosts: nHosts, hostsPerPod: hostPerPod };
}

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

/**
 * An IPv4 router layered on two Ethernet LANs (examples/ip-router, with `prefixes`
 * /24 routes): frames arrive from outside on lanA, lanA.r pops Ethernet into ip,
 * ip.r matches the longest prefix, lowers the TTL and transmits on the virtual
 * link implemented by lanB's session, lanB.r pushes Ethernet and the frame
 * leaves on lanB's external link.
 */
export function routerSpec(prefixes = 1024): string {
  const routes = Array.from(
    { length: prefixes },
    (_, i) => `            - { match: { dst: 10.${(i >>> 8) & 0xff}.${i & 0xff}.0/24 }, out: 2 }`,
  );
  return `networks:
  lanA:
    header: ethernet
    members:
      r: { name: "02:00:00:00:0a:fe" }
    links: [ { external: feed, to: r.1, record: false } ]
    tables:
      r:
        acquire: [ { match: { dst: "02:00:00:00:0a:fe" }, do: receive } ]
        receive: [ { match: { type: 0x0800 }, do: { link: ip.1 } } ]
  lanB:
    header: ethernet
    members:
      r: { name: "02:00:00:00:0b:fe" }
    links: [ { from: r.1, external: out, record: false } ]
    tables:
      r:
        send: [ { session: 1, header: { dst: "02:00:00:00:0b:02", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
  ip:
    header: ipv4
    ttl: decrement
    members:
      r: { name: 10.255.255.254 }
      h2: { name: 10.255.255.2 }
    links:
      - { external: from-lanA, to: r.1, record: false }
      - { from: r.2, to: h2.1, record: false }
    tables:
      r:
        acquire: [ { do: forward } ]
        forward:
          kind: lpm
          rows:
${routes.join("\n")}
        transmit: [ { out: 2, via: { session: lanB.1 } } ]
`;
}

/** 64-byte Ethernet frames to the router's MAC carrying IPv4 to 10.(i>>8).(i&255).1, i over `prefixes`. */
function routedFrames(count: number, prefixes: number): InputBatch[] {
  const pairs = randomPairs(count, prefixes, 3);
  return frames(pairs, [0]).map((b, k) => {
    for (let i = 0; i < b.count; i++) {
      const f = b.data.subarray(i * FRAME_LEN, (i + 1) * FRAME_LEN);
      f.set([0x02, 0, 0, 0, 0x0a, 0xfe], 0);
      const ip = f.subarray(14);
      const route = (pairs[k * BATCH + i]?.[0] ?? 1) - 1;
      ip.set([
        0x45,
        0,
        0,
        FRAME_LEN - 14,
        0,
        0,
        0,
        0,
        64,
        17,
        0,
        0,
        10,
        0,
        1,
        1,
        10,
        (route >>> 8) & 0xff,
        route & 0xff,
        1,
      ]);
      let sum = 0;
      for (let j = 0; j < 20; j += 2) sum += ((ip[j] ?? 0) << 8) | (ip[j + 1] ?? 0);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      ip[10] = (~sum >>> 8) & 0xff;
      ip[11] = ~sum & 0xff;
    }
    return b;
  });
}

/**
 * VXLAN between two VTEPs (examples/vxlan without the switch): tenant frames
 * sent by vm3 are encapsulated twice at machine a (VXLAN, then Ethernet),
 * cross the LAN, and are decapsulated twice at b up to delivery to vm5.
 */
export function vxlanSpec(): string {
  return `networks:
  lan:
    header: ethernet
    members:
      a: { name: "02:00:00:00:00:0a" }
      b: { name: "02:00:00:00:00:0b" }
    links: [ { from: a.1, to: b.1, record: false } ]
    tables:
      a:
        send:    [ { session: 1, header: { dst: "02:00:00:00:00:0b", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
      b:
        acquire: [ { match: { dst: "02:00:00:00:00:0b" }, do: receive } ]
        receive: [ { match: { type: 0x0800 }, do: { link: overlay.1 } } ]
  overlay:
    header: vxlan
    members:
      a: { name: 192.0.2.1 }
      b: { name: 192.0.2.2 }
    links: [ { from: a.1, to: b.1, record: false } ]
    tables:
      a:
        send:     [ { session: 1, header: { dst: 192.0.2.2, sport: 49152, vni: 100 } } ]
        forward:  [ { in: self, out: 1 } ]
        transmit: [ { out: 1, via: { session: lan.1 } } ]
      b:
        acquire: [ { match: { dst: 192.0.2.2, dport: 4789 }, do: receive } ]
        receive: [ { match: { vni: 100 }, do: { link: tenant.1 } } ]
  tenant:
    header: ethernet
    members:
      vm3: { name: "02:00:00:00:01:03", machine: a }
      vm5: { name: "02:00:00:00:01:05", machine: b }
    links: [ { from: vm3.1, to: vm5.1, record: false } ]
    tables:
      vm3:
        forward:  [ { in: self, out: 1 } ]
        transmit: [ { out: 1, via: { session: overlay.1 } } ]
      vm5:
        acquire: [ { match: { dst: "02:00:00:00:01:05" }, do: receive } ]
        receive: [ { do: deliver } ]
`;
}

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
