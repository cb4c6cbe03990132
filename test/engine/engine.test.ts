// The engine (src/engine/engine.ts) as `strata serve` runs it, without live
// interfaces: packets submitted at external endpoints come out of the other
// external link (to the listeners), with the router's work done on them; --out
// holds what `strata run` would write for the same packets; control work between
// batches takes effect for the next one; deliveries reach their listeners.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../..//src/cli/main.js";
import { memoryIo } from "../../src/cli/io.js";
import { openCapture } from "../../src/pcap/index.js";
import type { Summary } from "../../src/engine/summary.js";
import { readIndexed } from "../../src/engine/trace-file.js";
import { TRACE_LINE_MAX } from "../../src/engine/trace.js";
import type { Engine } from "../../src/engine/engine.js";
import { runCommand } from "../../src/serve/control.js";
import { openServed } from "./served.js";
import { pcapPackets } from "../pcap/builders.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

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
const mac = (b: Uint8Array, at: number): string =>
  [...b.subarray(at, at + 6)].map((x) => x.toString(16).padStart(2, "0")).join(":");

interface Left {
  exit: string;
  data: Uint8Array;
}

function open(out?: string): { em: Engine; left: Left[]; stop: () => Summary } {
  const { em, stop } = openServed({
    spec,
    endpoints: ["lanA:hostA", "lanB:hostB"],
    ...(out !== undefined ? { out, trace: true } : {}),
    flushMs: 0,
  });
  const left: Left[] = [];
  em.onExit((exit, data, start, len) => left.push({ exit: exit.name, data: data.slice(start, start + len) }));
  return { em, left, stop };
}

/** Two acquire rows with one value and action under two masks: a write of one is not the other. */
const SAME_VALUE_SPEC = `networks:
  lan:
    header: ethernet
    members:
      s: { name: "02:00:00:00:00:01", role: infra }
      h: { name: "02:00:00:00:00:02" }
    links:
      - { from: h.1, to: s.1, mode: two-way }
    tables:
      s:
        acquire:
          - { match: { dst: "02:00:00:00:00:00 &&& ff:ff:ff:00:00:00" }, do: forward }
          - { match: { dst: "02:00:00:00:00:00 &&& ff:ff:00:00:00:00" }, do: forward }
        forward: [ { out: 1 } ]
`;

describe("Engine, as strata serve runs it", () => {
  it("names its exits and external ends", () => {
    const { em } = open();
    expect(em.exits.map((x) => x.name)).toEqual(["lanA:hostA", "lanB:hostB"]);
    const a = em.external("lanA:hostA");
    expect([a.endpoint, a.exit?.name]).toEqual([0, "lanA:hostA"]);
    expect(() => em.external("lanA:nope")).toThrow(
      /network lanA has no external link 'nope' \(external links: lanA:hostA, lanB:hostB, ip:netA, ip:netB\)/,
    );
    expect(() => em.external("hostA")).toThrow(/names no network: write NETWORK:EXTERNAL/);
    em.stop();
  });

  it.each([
    {
      name: "h1 → h2",
      endpoint: 0,
      file: "example-router-h1.pcap",
      exit: "lanB:hostB",
      src: "02:00:00:00:0b:fe",
      dst: "02:00:00:00:0b:02",
    },
    {
      name: "h2 → h1",
      endpoint: 1,
      file: "example-router-h2.pcap",
      exit: "lanA:hostA",
      src: "02:00:00:00:0a:fe",
      dst: "02:00:00:00:0a:01",
    },
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
    const { em, stop } = open(out);
    // In timestamp order, as strata run merges its inputs, one batch each.
    for (const [ep, f] of [...a.map((f) => [0, f] as const), ...b.map((f) => [1, f] as const)].sort(
      (x, y) => x[1].sec - y[1].sec || x[1].nsec - y[1].nsec,
    )) {
      em.submit(ep, f.data, f.data.length, f.data.length, f.sec, f.nsec);
      em.flush();
    }
    const s = stop();
    const ref = join(tempDir(), "run");
    const io = memoryIo();
    expect(
      await main(
        [
          "run",
          spec,
          "--in",
          `lanA:hostA=${pcap("example-router-h1.pcap")}`,
          "--in",
          `lanB:hostB=${pcap("example-router-h2.pcap")}`,
          "--out",
          ref,
          "--trace",
        ],
        io,
      ),
    ).toBe(0);
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

  it("with tracePackets, traces only those packets (numbered as they came)", () => {
    const [f] = frames(pcap("example-router-h1.pcap"));
    if (f === undefined) throw new Error("empty capture");
    const out = join(tempDir(), "serve");
    const { em, stop } = openServed({
      spec,
      endpoints: ["lanA:hostA"],
      out,
      trace: true,
      tracePackets: [
        [1, 2],
        [5, 5],
      ],
      flushMs: 0,
    });
    for (let k = 0; k < 8; k++) {
      em.submit(0, f.data);
      em.flush();
    }
    stop();
    const lines = readFileSync(join(out, "trace.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { packet: number }).packet)).toEqual([1, 2, 5]);
  });

  it(
    "traceMaxBytes: tracing stops after the batch that reaches it, and says " +
      "so once; the trace and its index stay whole",
    () => {
      const [f] = frames(pcap("example-router-h1.pcap"));
      if (f === undefined) throw new Error("empty capture");
      const serve = (cap: number): { said: { bytes: number; packets: number }[]; trace: string; out: string } => {
        const out = join(tempDir(), "serve");
        const said: { bytes: number; packets: number }[] = [];
        const { em, stop } = openServed({
          spec,
          endpoints: ["lanA:hostA"],
          out,
          trace: true,
          traceMaxBytes: cap,
          onTraceFull: (t) => said.push(t),
          flushMs: 0,
        });
        for (let k = 0; k < 6; k++) {
          em.submit(0, f.data, f.data.length, f.data.length, 1, k); // one batch each, lines of one length
          em.flush();
        }
        expect(stop().packets.injected).toBe(6);
        return { said, trace: readFileSync(join(out, "trace.jsonl"), "utf8"), out };
      };
      const all = serve(1e9);
      expect(all.said).toEqual([]);
      const line = Buffer.byteLength(all.trace) / 6;
      const capped = serve(Math.round(1.5 * line));
      expect(capped.said).toEqual([{ bytes: 2 * line, packets: 2 }]);
      expect(capped.trace).toBe(
        all.trace
          .split("\n")
          .slice(0, 2)
          .map((l) => `${l}\n`)
          .join(""),
      );
      expect(readIndexed(capped.out, 1, TRACE_LINE_MAX)).toMatchObject({ found: true, line: 2 });
    },
  );

  it(
    "applies control work between batches: a forward row deleted stops the " + "next packet, not the one before",
    async () => {
      const { em, left } = open();
      const [f] = frames(pcap("example-router-h1.pcap"));
      if (f === undefined) throw new Error("empty capture");
      em.submit(0, f.data);
      const r = em.compiled.members.find((m) => m.qualified === "ip.r");
      const forward = r?.tables.forward;
      const row = forward?.rows.find((x) => x.text.includes("10.0.2.0/24"));
      if (forward === undefined || row === undefined) throw new Error("no forward row");
      // Submitted before the delete: routed with the row in force.
      const result = await em.between(() => em.write([{ op: "delete", table: forward, match: row.match }]));
      expect(result.ok).toBe(true);
      em.submit(0, f.data);
      em.flush();
      expect(left.map((l) => l.exit)).toEqual(["lanB:hostB"]);
      const s = em.stop();
      expect(s.packets).toEqual({ injected: 2, copies: 0, delivered: 0, dropped: 1, exited: 1 });
      expect(s.drops).toEqual({ "forward-miss": 1 });
    },
  );

  it(
    "a control command's write renames the trace's rows: a row put back at " + "another entry is named as itself",
    async () => {
      const [f] = frames(pcap("example-router-h1.pcap"));
      if (f === undefined) throw new Error("empty capture");
      const out = join(tempDir(), "serve");
      const { em, stop } = openServed({ spec, endpoints: ["lanA:hostA"], out, trace: true, flushMs: 0 });
      // Row 1 leaves its entry, row 0 too; row 1 comes back in the entry row 0 left.
      for (const line of ["delete ip:r forward 1", "delete ip:r forward 0", "insert ip:r forward 1"])
        expect((await runCommand(em, line)).line).toMatch(/^(deleted|inserted) /);
      em.submit(0, f.data);
      em.flush();
      expect(stop().rows.map((r) => [r.member, r.table, r.row])).toContainEqual(["ip.r", "forward", 1]);
      const steps = (
        JSON.parse(readFileSync(join(out, "trace.jsonl"), "utf8")) as {
          steps: { step: string; member?: string; row?: unknown; rule?: unknown }[];
        }
      ).steps;
      expect(steps.filter((x) => x.step === "forward" && x.member === "ip.r").map((x) => [x.row, x.rule])).toEqual([
        [1, "dst 10.0.2.0/24 → out 2"],
      ]);
    },
  );

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
    open(join(out, "x")).stop();
    const other = tempDir();
    rmSync(join(out, "x", ".strata-output"));
    expect(() => open(join(out, "x"))).toThrow(/has no \.strata-output/);
    expect(readdirSync(other)).toEqual([]);
  });
});

describe("deliveries reported to listeners (what serve --p4runtime sends as PacketIn)", () => {
  const examples = REPLAY_EXAMPLES.map((name) => ({
    name,
    inputs: (JSON.parse(readFileSync(join(root, "examples", name, "example.json"), "utf8")) as { inputs: string[] })
      .inputs,
  }));

  it.each(examples)(
    "$name: each member's deliveries, with the in-link each came on, are strata run's; --out is strata run's too",
    async ({ name, inputs }) => {
      const netSpec = join(root, "examples", name, "network.yaml");
      const split = inputs.map((i) => ({
        endpoint: i.slice(0, i.indexOf("=")),
        file: join(root, i.slice(i.indexOf("=") + 1)),
      }));
      // The reference: strata run, its delivered/ files and the in-link of each delivery from its trace (the receive
      // step before it).
      const ref = tempDir();
      const io = memoryIo();
      expect(
        await main(
          [
            "run",
            netSpec,
            ...split.flatMap((s) => ["--in", `${s.endpoint}=${s.file}`]),
            "--out",
            ref,
            "--trace",
            "--force",
          ],
          io,
        ),
        io.stderr.text,
      ).toBe(0);
      const wantIn: string[] = [];
      for (const line of readFileSync(join(ref, "trace.jsonl"), "utf8").trim().split("\n")) {
        const steps = (JSON.parse(line) as { steps: { copy: number; step: string; member?: string; in?: number }[] })
          .steps;
        steps.forEach((st, k) => {
          if (st.step !== "deliver") return;
          const receive = steps
            .slice(0, k)
            .reverse()
            .find((x) => x.copy === st.copy && x.step === "receive" && x.member === st.member);
          wantIn.push(`${st.member ?? ""} in ${receive?.in ?? "?"}`);
        });
      }

      const out = join(tempDir(), "serve");
      const { em, stop } = openServed({
        spec: netSpec,
        endpoints: split.map((s) => s.endpoint),
        out,
        deliveries: true,
      });
      const got = new Map<string, Buffer[]>();
      const gotIn: string[] = [];
      em.onDeliver((member, inLink, data, start, len) => {
        const q = em.compiled.members[member]?.qualified ?? "";
        got.set(q, [...(got.get(q) ?? []), Buffer.from(data.slice(start, start + len))]);
        gotIn.push(`${q} in ${inLink}`);
      });
      const all = split
        .flatMap((s, ep) => frames(s.file).map((f) => ({ ep, f })))
        .sort((x, y) => x.f.sec - y.f.sec || x.f.nsec - y.f.nsec);
      for (const { ep, f } of all) em.submit(ep, f.data, f.data.length, f.data.length, f.sec, f.nsec);
      em.flush();
      const s = stop();
      expect(s.packets.delivered).toBe(gotIn.length);
      expect(gotIn.sort()).toEqual(wantIn.sort());
      for (const m of em.compiled.members) {
        const want = pcapPackets(join(ref, "delivered", `${m.qualified}.pcap`));
        expect((got.get(m.qualified) ?? []).map(hex), m.qualified).toEqual(want.map(hex));
        // The tags stay out of the files: --out's delivered/ is strata run's, byte for byte.
        const file = join(ref, "delivered", `${m.qualified}.pcap`);
        if (existsSync(file))
          expect(hex(readFileSync(join(out, "delivered", `${m.qualified}.pcap`))), m.qualified).toBe(
            hex(readFileSync(file)),
          );
      }
    },
  );

  it(
    "tables that start empty: a row counts (summary, trace, commands) once " +
      "a write puts its match and action in, not before or after",
    async () => {
      const ipSpec = join(root, "examples/ip-router/network.yaml");
      const out = join(tempDir(), "empty");
      const { em, stop } = openServed({ spec: ipSpec, endpoints: ["lanA:h1.1"], emptyTables: true, out, trace: true });
      const [f] = frames(pcap("example-router-h1.pcap"));
      if (f === undefined) throw new Error("empty capture");
      const fullOut = join(tempDir(), "full");
      const full = openServed({ spec: ipSpec, endpoints: ["lanA:h1.1"], out: fullOut, trace: true });
      full.em.submit(0, f.data);
      full.em.flush();
      const want = full.stop().rows;
      expect(want.length).toBeGreaterThan(0);
      // Empty: the packet is dropped, no row counted.
      em.submit(0, f.data);
      em.flush();
      expect(em.summary().rows).toEqual([]);
      // Every row written as a controller would (one write per table), noted: the same packet hits what it hits in
      // `full`.
      await em.between(() => {
        for (const t of em.compiled.tables) {
          const result = em.write(
            t.rows.map((r) => ({ op: "insert" as const, table: t, match: r.match, action: r.action })),
          );
          expect(result.ok).toBe(true);
        }
      });
      em.submit(0, f.data);
      em.flush();
      expect(em.summary().rows).toEqual(want);
      // A modify to another action, or a delete, takes the row out of the count.
      const forward = em.compiled.members.find((m) => m.qualified === "ip.r")?.tables.forward;
      const row = forward?.rows.find((r) => r.text.includes("10.0.2.0/24"));
      if (forward === undefined || row === undefined) throw new Error("no forward row");
      await em.between(() =>
        em.write([{ op: "modify", table: forward, match: row.match, action: { ...row.action, arg: 1 } }]),
      );
      const k = forward.rows.indexOf(row);
      expect(em.installed.entries.get(forward.id)?.[k]).toBe(-1);
      await em.between(() => em.write([{ op: "modify", table: forward, match: row.match, action: row.action }]));
      expect(em.installed.entries.get(forward.id)?.[k]).toBeGreaterThanOrEqual(0);
      await em.between(() => em.write([{ op: "delete", table: forward, match: row.match }]));
      expect(em.installed.entries.get(forward.id)?.[k]).toBe(-1);
      stop();
      // The trace names the rows of the packet that ran after the writes as a fully installed emulation's trace does.
      const steps = (file: string, line: number): unknown[] =>
        (
          JSON.parse(readFileSync(file, "utf8").trim().split("\n")[line] ?? "{}") as {
            steps: { row?: unknown; rule?: unknown }[];
          }
        ).steps.map((x) => [x.row, x.rule]);
      expect(steps(join(out, "trace.jsonl"), 1)).toEqual(steps(join(fullOut, "trace.jsonl"), 0));
    },
  );

  it.each([
    {
      name: "p4-features (exact, LPM, ternary, range, optional, keyless, send)",
      spec: join(root, "test/fixtures/specs/p4-features.yaml"),
      endpoint: "lan:s.3",
    },
    { name: "ip-router (LPM routes)", spec: join(root, "examples/ip-router/network.yaml"), endpoint: "lanA:h1.1" },
    { name: "rows with one value under two masks, one action", spec: SAME_VALUE_SPEC, endpoint: "lan:h.1" },
  ])(
    "$name: a write installs the rows with its match and action, and only those; a delete takes them out",
    ({ spec: text, endpoint }) => {
      let file = text;
      if (text.includes("\n")) {
        file = join(tempDir(), "network.yaml");
        writeFileSync(file, text);
      }
      const { em, stop } = openServed({ spec: file, endpoints: [endpoint], emptyTables: true });
      const bytes = (_: string, v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v);
      const same = (a: { match: unknown; action: unknown }, b: { match: unknown; action: unknown }): boolean =>
        JSON.stringify([a.match, a.action], bytes) === JSON.stringify([b.match, b.action], bytes);
      let written = 0;
      for (const t of em.compiled.tables) {
        t.rows.forEach((row, k) => {
          expect(em.write([{ op: "insert", table: t, match: row.match, action: row.action }]).ok).toBe(true);
          const entries = em.installed.entries.get(t.id) ?? [];
          t.rows.forEach((other, j) =>
            expect([t.kind, k, j, (entries[j] ?? -1) >= 0]).toEqual([t.kind, k, j, j === k || same(row, other)]),
          );
          expect(em.write([{ op: "delete", table: t, match: row.match }]).ok).toBe(true);
          expect(em.installed.entries.get(t.id)?.every((e) => e === -1)).toBe(true);
          written++;
        });
      }
      expect(written).toBe(em.compiled.tables.reduce((n, t) => n + t.rows.length, 0));
      stop();
    },
  );

  it("adds an endpoint where a member sends in a session the first time one is asked for, once", () => {
    const ipSpec = join(root, "examples/ip-router/network.yaml");
    const { em } = openServed({ spec: ipSpec, endpoints: ["lanA:h1.1"], deliveries: true });
    const h1 = em.compiled.members.find((m) => m.qualified === "lanA.h1")?.index ?? -1;
    const at = { kind: "session" as const, member: h1, session: 1, link: -1 };
    const k = em.endpointAt(at, "p4runtime");
    expect(k).toBe(1);
    expect(em.endpointAt(at, "p4runtime")).toBe(1);
    expect(em.endpoints[k]?.text).toBe("lanA:h1@1");
    const delivered: string[] = [];
    em.onDeliver((member) => delivered.push(em.compiled.members[member]?.qualified ?? ""));
    const [f] = frames(pcap("example-router-h1.pcap"));
    if (f === undefined) throw new Error("empty capture");
    em.submit(k, f.data.subarray(14));
    em.flush();
    expect(delivered).toEqual(["ip.h2"]);
    expect(em.stop().inputs.map((i) => [i.endpoint, i.file, i.packets])).toEqual([
      ["lanA:h1.1", "", 0],
      ["lanA:h1@1", "p4runtime", 1],
    ]);
  });
});
