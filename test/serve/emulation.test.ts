// The emulation behind `strata serve`, without live interfaces: packets submitted
// at external endpoints come out of the other external link (to the listeners),
// with the router's work done on them; --out holds what `strata run` would write
// for the same packets; control work between batches takes effect for the next one.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { memoryIo } from "../../src/cli/io.js";
import { openCapture } from "../../src/pcap/index.js";
import { Emulation } from "../../src/serve/emulation.js";
import type { Summary } from "../../src/run/summary.js";

const root = new URL("../..", import.meta.url).pathname;
const spec = join(root, "examples/live-router/network.yaml");
const pcap = (f: string): string => join(root, "pcaps", f);
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "strata-emulation-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every frame of a capture, copied. */
function frames(file: string): { data: Uint8Array; sec: number; nsec: number }[] {
  const r = openCapture(file);
  const out: { data: Uint8Array; sec: number; nsec: number }[] = [];
  for (const b of r.batches()) {
    for (let i = 0; i < b.count; i++) {
      const at = b.offset[i] ?? 0;
      out.push({ data: b.data.slice(at, at + (b.capLen[i] ?? 0)), sec: b.tsSec[i] ?? 0, nsec: b.tsNsec[i] ?? 0 });
    }
  }
  r.close();
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const mac = (b: Uint8Array, at: number): string => [...b.subarray(at, at + 6)].map((x) => x.toString(16).padStart(2, "0")).join(":");

interface Left {
  exit: string;
  data: Uint8Array;
}

function open(out?: string): { em: Emulation; left: Left[] } {
  const em = Emulation.open({ spec, endpoints: ["lanA:hostA", "lanB:hostB"], ...(out !== undefined ? { out, trace: true } : {}), flushMs: 0 });
  const left: Left[] = [];
  em.onExit((exit, data, start, len) => left.push({ exit: exit.name, data: data.slice(start, start + len) }));
  return { em, left };
}

describe("Emulation", () => {
  it("names its exits and external ends", () => {
    const { em } = open();
    expect(em.exits.map((x) => x.name)).toEqual(["lanA:hostA", "lanB:hostB"]);
    const a = em.external("lanA:hostA");
    expect([a.endpoint, a.exit?.name]).toEqual([0, "lanA:hostA"]);
    expect(() => em.external("lanA:nope")).toThrow(/network lanA has no external link 'nope' \(external links: lanA:hostA, lanB:hostB, ip:netA, ip:netB\)/);
    expect(() => em.external("hostA")).toThrow(/names no network: write NETWORK:EXTERNAL/);
    em.stop();
  });

  it.each([
    { name: "h1 → h2", endpoint: 0, file: "example-router-h1.pcap", exit: "lanB:hostB", src: "02:00:00:00:0b:fe", dst: "02:00:00:00:0b:02" },
    { name: "h2 → h1", endpoint: 1, file: "example-router-h2.pcap", exit: "lanA:hostA", src: "02:00:00:00:0a:fe", dst: "02:00:00:00:0a:01" },
  ])("routes $name: new Ethernet header, TTL − 1, checksum fixed", ({ endpoint, file, exit, src, dst }) => {
    const { em, left } = open();
    const [f] = frames(pcap(file));
    if (f === undefined) throw new Error("empty capture");
    em.submit(endpoint, f.data);
    em.flush();
    expect(left.map((l) => l.exit)).toEqual([exit]);
    const got = left[0]?.data ?? new Uint8Array();
    expect([mac(got, 0), mac(got, 6)]).toEqual([dst, src]);
    expect(got[14 + 8]).toBe((f.data[14 + 8] ?? 0) - 1); // TTL
    // The IPv4 header checksum (RFC 1071) over the new header is right.
    let sum = 0;
    for (let i = 14; i < 34; i += 2) sum += ((got[i] ?? 0) << 8) | (got[i + 1] ?? 0);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    expect(sum).toBe(0xffff);
    // Everything after the IPv4 header is untouched.
    expect(hex(got.subarray(34))).toBe(hex(f.data.subarray(34)));
    const s = em.stop();
    expect(s.packets).toEqual({ injected: 1, copies: 0, delivered: 0, dropped: 0, exited: 1 });
  });

  it("writes to --out what strata run writes for the same packets", async () => {
    const a = frames(pcap("example-router-h1.pcap"));
    const b = frames(pcap("example-router-h2.pcap"));
    const out = join(tempDir(), "serve");
    const { em } = open(out);
    // In timestamp order, as strata run merges its inputs, one batch each.
    for (const [ep, f] of [...a.map((f) => [0, f] as const), ...b.map((f) => [1, f] as const)].sort((x, y) => x[1].sec - y[1].sec || x[1].nsec - y[1].nsec)) {
      em.submit(ep, f.data, f.data.length, f.data.length, f.sec, f.nsec);
      em.flush();
    }
    const s = em.stop();
    const ref = join(tempDir(), "run");
    const io = memoryIo();
    expect(await main(["run", spec, "--in", `lanA:hostA=${pcap("example-router-h1.pcap")}`, "--in", `lanB:hostB=${pcap("example-router-h2.pcap")}`, "--out", ref, "--trace"], io)).toBe(0);
    const runSummary = JSON.parse(readFileSync(join(ref, "summary.json"), "utf8")) as Summary;
    expect(s.packets).toEqual(runSummary.packets);
    expect(s.packets).toEqual({ injected: 2, copies: 0, delivered: 0, dropped: 0, exited: 2 });
    expect(s.links).toEqual(runSummary.links);
    for (const sub of ["links", "delivered"]) {
      const files = readdirSync(join(ref, sub)).sort();
      expect(readdirSync(join(out, sub)).sort()).toEqual(files);
      for (const f of files) expect(hex(readFileSync(join(out, sub, f))), f).toBe(hex(readFileSync(join(ref, sub, f))));
    }
    expect(existsSync(join(out, "summary.json"))).toBe(true);
    expect(readFileSync(join(out, "trace.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
    expect(readFileSync(join(out, ".strata-output"), "utf8")).toMatch(/summary\.json/);
  });

  it("applies control work between batches: a forward row deleted stops the next packet, not the one before", async () => {
    const { em, left } = open();
    const [f] = frames(pcap("example-router-h1.pcap"));
    if (f === undefined) throw new Error("empty capture");
    em.submit(0, f.data);
    const r = em.compiled.members.find((m) => m.qualified === "ip.r");
    const forward = r?.tables.forward;
    const row = forward?.rows.find((x) => x.text.includes("10.0.2.0/24"));
    if (forward === undefined || row === undefined) throw new Error("no forward row");
    // Submitted before the delete: routed with the row in force.
    const result = await em.between(() => em.installed.tables.write([{ op: "delete", table: forward, match: row.match }]));
    expect(result.ok).toBe(true);
    em.submit(0, f.data);
    em.flush();
    expect(left.map((l) => l.exit)).toEqual(["lanB:hostB"]);
    const s = em.stop();
    expect(s.packets).toEqual({ injected: 2, copies: 0, delivered: 0, dropped: 1, exited: 1 });
    expect(s.drops).toEqual({ "forward-miss": 1 });
  });

  it("control work asked for during a batch runs after the whole batch", async () => {
    const { em } = open();
    const [f] = frames(pcap("example-router-h1.pcap"));
    if (f === undefined) throw new Error("empty capture");
    const order: string[] = [];
    let asked: Promise<number> | undefined;
    em.onExit(() => {
      order.push("exit");
      asked ??= em.between(() => {
        order.push("control");
        return em.injected;
      });
    });
    for (let i = 0; i < 3; i++) em.submit(0, f.data);
    em.flush();
    expect(await asked).toBe(3); // the batch's three packets were counted before it ran
    expect(order).toEqual(["exit", "exit", "exit", "control"]);
    em.stop();
  });

  it("refuses an --out it did not write, before anything runs", () => {
    const out = tempDir();
    const { em } = open(join(out, "x"));
    em.stop();
    const other = tempDir();
    rmSync(join(out, "x", ".strata-output"));
    expect(() => open(join(out, "x"))).toThrow(/has no \.strata-output/);
    expect(readdirSync(other)).toEqual([]);
  });
});
