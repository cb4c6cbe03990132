// An input packet whose staging bytes are its own is written in place
// (assembly/pipeline/packet.ts holdInput): its TTL, and a header pushed into
// the room a popped one left, with no copy; replicated copies copy on write;
// a push with no room in front copies; packets not staged in order, one after another, are read-only. Each case
// stages a batch, runs it, and holds the outputs to the same batch staged
// read-only (the packets in the area in reverse order: the copying road), the
// staging area to what the case says, and the bytes between packets (0xa5) to
// none written.

import { describe, expect, it } from "vitest";
import { routerSpec, vxlanSpec } from "../../bench/descriptions.js";
import { routedFrames } from "../../bench/frames.js";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { install } from "../../src/control/install.js";
import { parseSpec } from "../../src/description/load.js";
import { REGIONS } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { type InputBatch, Runner } from "../../src/wasm/runner.js";
import { recordIn } from "./helpers/recorded.js";

const GAP = 24;
const FILL = 0xa5;

/** r forwards 10.0.2.0/24 onto two out-links, TTL − 1 on each copy: b and c deliver. */
const replicated = `networks:
  ip:
    header: ipv4
    ttl: decrement
    members:
      r: { name: 10.0.1.254, role: infra }
      b: { name: 10.0.2.2 }
      c: { name: 10.0.2.3 }
    links:
      - { external: feed, to: r.4 }
      - { from: r.7, to: b.1 }
      - { from: r.8, to: c.1 }
    tables:
      r: { acquire: [ { do: forward } ], forward: [ { match: { dst: 10.0.2.0/24 }, out: [7, 8] } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      c: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;

/** An IPv4 packet from 10.0.1.1 to 10.0.2.2, TTL 64, its checksum summed here; `n` payload bytes. */
function ipv4(n: number): Uint8Array {
  const len = 20 + n;
  const h = [0x45, 0, len >> 8, len & 0xff, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 1, 1, 10, 0, 2, 2];
  h[10] = checksum(h) >> 8;
  h[11] = checksum(h) & 0xff;
  return Uint8Array.from([...h, ...Array.from({ length: n }, (_, i) => i)]);
}

/** RFC 1071 over an IPv4 header (its checksum field as it is): 0 when the header's checksum is right. */
function checksum(h: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += ((h[i] ?? 0) << 8) | (h[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** `packets` staged apart, GAP bytes of FILL between and around them, in order or in the area's reverse order. */
function batchOf(packets: readonly Uint8Array[], reversed: boolean): InputBatch {
  const n = packets.length;
  const longest = Math.max(...packets.map((p) => p.length));
  const offset = Uint32Array.from(packets, (_, i) => GAP + (reversed ? n - 1 - i : i) * (longest + GAP));
  const data = new Uint8Array(GAP + n * (longest + GAP)).fill(FILL);
  packets.forEach((p, i) => data.set(p, offset[i]));
  const lens = Uint32Array.from(packets, (p) => p.length);
  return {
    data,
    count: n,
    offset,
    capLen: lens,
    origLen: lens,
    tsSec: new Float64Array(n).fill(1),
    tsNsec: new Uint32Array(n),
    endpoint: 0,
  };
}

interface Ran {
  /** Every record, by file. */
  out: Map<string, Uint8Array[]>;
  /** The staging area after the run: the batch's span (see span). */
  staged: Uint8Array;
}

function runBatch(spec: string, endpoint: string, batch: InputBatch): Ran {
  const compiled = compile(parseSpec(spec, "case.yaml"));
  const dp = DataPlane.load();
  install(dp, compiled, [resolveEndpoint(compiled, endpoint)]);
  const recorded = recordIn(dp, compiled);
  const runner = new Runner(dp, { maxFanout: compiled.maxFanout }, recorded);
  runner.run(batch, 0, null);
  runner.flushRecordings();
  const at = dp.exports.region(REGIONS.indexOf("in-data")) >>> 0;
  const out = new Map([...recorded.files].map(([file, recs]) => [file, recs.map((r) => r.bytes)]));
  return { out, staged: dp.mem.u8.slice(at, at + span(batch).length) };
}

/** The bytes of `batch` that stage() puts in the area: from its first packet's first byte to its last's last. */
function span(batch: InputBatch): Uint8Array {
  const offsets = Array.from(batch.offset);
  const ends = offsets.map((o, i) => o + (batch.capLen[i] ?? 0));
  return batch.data.slice(Math.min(...offsets), Math.max(...ends));
}

interface Case {
  name: string;
  spec: string;
  endpoint: string;
  packets: Uint8Array[];
  /** The file whose records are the packets' outputs, one a packet, in order. */
  file: string;
  /** What each packet's staging bytes hold after the run, given its output. */
  staged: (output: Uint8Array, input: Uint8Array) => Uint8Array;
}

const routed = routedFrames(6, 4)[0];
const frames = Array.from({ length: routed?.count ?? 0 }, (_, i) =>
  (routed?.data ?? new Uint8Array()).slice(i * 64, (i + 1) * 64),
);

const cases: Case[] = [
  {
    name: "router-layered: Ethernet popped, TTL − 1, Ethernet pushed where the popped one was: the output in place",
    spec: routerSpec(4).replace("{ from: r.1, external: out, record: false }", "{ from: r.1, external: out }"),
    endpoint: "lanA:feed",
    packets: frames,
    file: "links/lanB.out",
    staged: (output) => output,
  },
  {
    name: "replicated: TTL − 1 written once in place, then the bytes shared by the copies (read-only)",
    spec: replicated,
    endpoint: "ip:feed",
    packets: [ipv4(30), ipv4(31), ipv4(0), ipv4(1500)],
    file: "delivered/ip.c",
    staged: (output) => output,
  },
  {
    name: "vxlan: a push with no room in front copies (the staging bytes stay as they were), up to a jumbo frame",
    spec: vxlanSpec(),
    endpoint: "tenant:vm3",
    packets: [60, 64, 1514, 9018].map(tenantFrame),
    file: "delivered/tenant.vm5",
    staged: (_, input) => input,
  },
];

/** A tenant frame of `len` bytes from vm3 to vm5. */
function tenantFrame(len: number): Uint8Array {
  const f = Uint8Array.from({ length: len }, (_, i) => i & 0xff);
  f.set([0x02, 0, 0, 0, 0x01, 0x05, 0x02, 0, 0, 0, 0x01, 0x03, 0x08, 0x00], 0);
  return f;
}

describe("input packets written in place", () => {
  it.each(cases)("$name", (c) => {
    const own = runBatch(c.spec, c.endpoint, batchOf(c.packets, false));
    const shared = runBatch(c.spec, c.endpoint, batchOf(c.packets, true));
    // Staged apart or read-only, the same records everywhere.
    expect(own.out).toEqual(shared.out);
    const outputs = own.out.get(c.file) ?? [];
    expect(outputs).toHaveLength(c.packets.length);
    // Read-only: the staging area is as staged.
    expect(shared.staged).toEqual(span(batchOf(c.packets, true)));
    // Apart: each packet's bytes are what the case says, and no byte around them is written.
    const want = batchOf(c.packets, false);
    c.packets.forEach((p, i) => {
      const output = outputs[i] ?? new Uint8Array();
      want.data.set(c.staged(output, p), (want.offset[i] ?? 0) + p.length - output.length);
    });
    expect(own.staged).toEqual(span(want));
  });

  it("an IPv4 packet's TTL is lowered once on each copy, its checksum right", () => {
    const { out } = runBatch(replicated, "ip:feed", batchOf([ipv4(30), ipv4(46)], false));
    for (const file of ["delivered/ip.b", "delivered/ip.c"])
      for (const p of out.get(file) ?? []) {
        expect(p[8]).toBe(63);
        expect(checksum(p)).toBe(0);
      }
    expect([...out.values()].flat()).toHaveLength(2 * 2 + 3 * 2); // two deliveries, three links recorded
  });
});
