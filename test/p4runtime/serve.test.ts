// A controller session on `strata serve --p4runtime --empty` (the command's own
// code path, in-process, its control commands on a stream): arbitration, each
// device's entries as `strata export p4` writes them, a packet-out in a session
// of h1, and the PacketIn at h2 — byte for byte what `strata run` of the
// example delivers to ip.h2 — while `--commands` sees the rows the controller
// installed and their hits. Real gRPC on localhost; the client knows only the
// official definitions (./client.ts).

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { serve } from "../../src/cli/serve.js";
import { Client, type M, statusCode, type Stream } from "./client.js";
import { pcapPackets } from "../pcap/builders.js";
import { until } from "../helpers/wait.js";

const root = new URL("../..", import.meta.url).pathname;
const SPEC = join(root, "examples/ip-router/network.yaml");
const H1_PCAP = join(root, "pcaps/example-router-h1.pcap");
const OK = 0,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6;

interface Manifest {
  readonly machine: string;
  readonly deviceId: number;
  readonly members: readonly { readonly number: number; readonly member: string }[];
}

/** Runs strata's command line in-process; its exit code must be 0. */
async function strata(args: string[]): Promise<string> {
  const io = memoryIo();
  const code = await main(args, io);
  expect(code, io.stderr.text).toBe(0);
  return io.stdout.text;
}

type Row = { member: string; table: string; row: number | "default"; hits: number };
const rowKey = (r: Row): string => `${r.member} ${r.table} ${String(r.row)}`;

describe("strata serve --p4runtime --empty: a controller session on the IP router", () => {
  it(
    "installs every device's exported entries, sends a packet-out in h1's " +
      "session and gets h2's PacketIn as strata run delivers it; --commands " +
      "counts the hits",
    async () => {
      // What the controller writes: `strata export p4`'s files.
      const exported = mkdtempSync(join(tmpdir(), "strata-p4in-export-"));
      await strata(["export", "p4", SPEC, "--out", exported]);
      const manifest = (machine: string): Manifest =>
        JSON.parse(readFileSync(join(exported, machine, "manifest.json"), "utf8")) as Manifest;
      const machines = ["h1", "r", "h2"].map(manifest);
      const number = (machine: string, member: string): number =>
        manifest(machine).members.find((m) => m.member === member)?.number ?? -1;

      // The reference: `strata run` of the example's h1 capture.
      const replayed = mkdtempSync(join(tmpdir(), "strata-p4in-run-"));
      await strata(["run", SPEC, "--in", `lanA:h1.1=${H1_PCAP}`, "--out", replayed]);
      const want = pcapPackets(join(replayed, "delivered", "ip.h2.pcap"));
      expect(want.length).toBe(1);
      const replayRows = (JSON.parse(readFileSync(join(replayed, "summary.json"), "utf8")) as { rows: Row[] }).rows;

      const commands = new PassThrough();
      const io = memoryIo();
      const done = serve(
        SPEC,
        { port: [], hopLimit: 64, copyLimit: 4096, p4runtime: "127.0.0.1:0", empty: true, commands: true, json: true },
        io,
        { commands },
      );
      const said = (pattern: RegExp): Promise<RegExpExecArray> =>
        until(
          () => pattern.exec(io.stderr.text),
          () => `never said ${pattern}: ${io.stderr.text}`,
        );
      const command = async (line: string, answer: RegExp): Promise<RegExpExecArray> => {
        commands.write(`${line}\n`);
        return said(answer);
      };
      const port = (await said(/P4Runtime server on 127\.0\.0\.1:(\d+): devices 1 h1, 2 r, 3 h2 \(empty\)/))[1] ?? "";
      const client = new Client(`127.0.0.1:${port}`);
      const streams = new Map<string, Stream>();
      try {
        // Arbitration: the controller is primary on every device (election id 1, the one entries.bin carries).
        for (const m of machines) {
          const s = client.stream();
          s.arbitrate(m.deviceId, 1);
          expect(statusCode(await s.next())).toBe(OK);
          streams.set(m.machine, s);
        }
        // Empty devices: the commands see the description's rows, none of them installed.
        await command(
          "delete ip:r forward 1",
          new RegExp(
            [
              String.raw`^strata: cannot delete ip\.r forward row 1 \(dst 10\.0\.2\.0\/24 → out`,
              String.raw` 2\): it is not in the table \(insert it first\)$`,
            ].join(""),
            "m",
          ),
        );
        await command("counts", /^injected 0, copies 0, delivered 0, dropped 0, left 0, row hits 0 on 0 rows$/m);

        for (const m of machines)
          await client.unaryRaw("Write", readFileSync(join(exported, m.machine, "entries.bin")));

        // A packet-out in session 1 of lanA.h1 (kind 2): h1's IPv4 packet, which lanA.h1 frames for r.
        const frame = pcapPackets(H1_PCAP)[0];
        if (frame === undefined) throw new Error("no packet in the h1 capture");
        const ipPacket = frame.subarray(14);
        streams.get("h1")?.send({
          packet: {
            payload: ipPacket,
            metadata: [
              { metadataId: 1, value: Buffer.from([number("h1", "lanA.h1")]) },
              { metadataId: 2, value: Buffer.from([2]) },
              { metadataId: 3, value: Buffer.from([1]) },
            ],
          },
        });
        const m = await streams.get("h2")?.next();
        const packet = (m?.packet ?? {}) as M;
        const meta = Object.fromEntries(
          ((packet.metadata ?? []) as M[]).map((x) => [Number(x.metadataId), [...(x.value as Buffer)]]),
        );
        // packet_in.member is ip.h2's number on device h2; in_link 1, the link from r.
        expect(meta).toEqual({ 1: [number("h2", "ip.h2")], 2: [1] });
        expect(Buffer.from(packet.payload as Buffer).equals(want[0] ?? Buffer.alloc(0))).toBe(true);
        // Nothing else was delivered: no PacketIn on h1 or r, none more on h2.
        for (const name of ["h1", "r", "h2"]) expect(await streams.get(name)?.drain(150)).toEqual([]);

        // The commands see the rows the controller installed, and the hits on them.
        const counted = await command(
          "counts",
          /^injected 1, copies 0, delivered 1, dropped 0, left 0, row hits (\d+) on (\d+) rows$/m,
        );
        await command("stop", /^stopping$/m);
        expect(await done).toBe(0);
        const summary = JSON.parse(io.stdout.text) as {
          rows: Row[];
          inputs: { endpoint: string; file: string; packets: number }[];
        };
        expect(summary.inputs).toEqual([
          { endpoint: "lanA:h1@1", file: "p4runtime", packets: 1, linkTypes: [], adapted: [] },
        ]);
        expect(Number(counted[1])).toBe(summary.rows.reduce((n, r) => n + r.hits, 0));
        expect(Number(counted[2])).toBe(summary.rows.length);
        // Every row the replay's packet hit, this one hit as often; the others are lanA.h1's (the packet-out starts
        // there).
        const served = new Map(summary.rows.map((r) => [rowKey(r), r.hits]));
        for (const r of replayRows) expect([rowKey(r), served.get(rowKey(r))]).toEqual([rowKey(r), r.hits]);
        const replayKeys = new Set(replayRows.map(rowKey));
        const extra = summary.rows.filter((r) => !replayKeys.has(rowKey(r)));
        expect(extra.length).toBeGreaterThan(0);
        expect(extra.every((r) => r.member === "lanA.h1")).toBe(true);
        expect(served.get("ip.r forward 1")).toBe(1);
        expect(served.get("ip.r forward 0")).toBeUndefined();
      } finally {
        for (const s of streams.values()) s.close();
        client.close();
        commands.end();
      }
    },
  );
});

describe("strata serve --p4runtime: the server's devices follow table writes made behind it", () => {
  it(
    "a --commands delete leaves Read and a DELETE NOT_FOUND; a controller's " +
      "INSERT then writes it; a reload that drops a route, or changes it, is " +
      "seen by Read",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "strata-p4sync-"));
      const spec = join(dir, "network.yaml");
      const text = readFileSync(SPEC, "utf8");
      const route2 = "            - { match: { dst: 10.0.2.0/24 }, out: 2 }\n";
      expect(text).toContain(route2);
      writeFileSync(spec, text);

      const commands = new PassThrough();
      const io = memoryIo();
      const done = serve(
        spec,
        { port: [], hopLimit: 64, copyLimit: 4096, p4runtime: "127.0.0.1:0", commands: true, json: true },
        io,
        { commands },
      );
      const said = (pattern: RegExp, from = 0): Promise<RegExpExecArray> =>
        until(
          () => pattern.exec(io.stderr.text.slice(from)),
          () => `never said ${pattern}: ${io.stderr.text}`,
        );
      const command = async (line: string, answer: RegExp): Promise<RegExpExecArray> => {
        const from = io.stderr.text.length;
        commands.write(`${line}\n`);
        return said(answer, from);
      };
      const port = (await said(/P4Runtime server on 127\.0\.0\.1:(\d+): devices 1 h1, 2 r, 3 h2/))[1] ?? "";
      const client = new Client(`127.0.0.1:${port}`);
      const R = 2;
      const stream = client.stream();
      try {
        stream.arbitrate(R, 1);
        expect(statusCode(await stream.next())).toBe(OK);
        const config = await client.unary("getForwardingPipelineConfig", { deviceId: String(R) });
        const tables = ((config.config as M).p4info as M).tables as M[];
        const forward = Number(
          ((tables.find((t) => (t.preamble as M).alias === "ip_r_forward") ?? {}).preamble as M).id,
        );
        const read = async (): Promise<M[]> =>
          (await client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: forward } }] })).map(
            (e) => e.tableEntry as M,
          );
        const prefix = (te: M): string => {
          const m = (te.match as M[])[0]?.lpm as M;
          return `${[...(m.value as Buffer)].join(".")}/${String(m.prefixLen)}`;
        };
        const routes = async (): Promise<string[]> => (await read()).map(prefix).sort();
        /** The per-update codes of a one-update Write (0: OK). */
        const write = async (type: string, tableEntry: M): Promise<number> => {
          try {
            await client.unary("write", {
              deviceId: String(R),
              electionId: { high: "0", low: "1" },
              updates: [{ type, entity: { tableEntry } }],
            });
            return OK;
          } catch (e) {
            return (e as { errors: { canonicalCode: number }[] }).errors[0]?.canonicalCode ?? -1;
          }
        };

        // The export's entries are installed: both routes.
        expect(await routes()).toEqual(["10.0.1.0/24", "10.0.2.0/24"]);
        const entry2 = (await read()).find((te) => prefix(te) === "10.0.2.0/24") ?? {};
        const { counterData: _c, ...key2 } = entry2;

        const steps: {
          what: string;
          run: () => Promise<unknown>;
          routes: string[];
          then?: { type: string; code: number };
        }[] = [
          {
            what: "--commands delete",
            run: () => command("delete ip:r forward 1", /^deleted ip\.r forward row 1 /m),
            routes: ["10.0.1.0/24"],
            then: { type: "DELETE", code: NOT_FOUND },
          },
          {
            what: "a controller's INSERT of it",
            run: () => write("INSERT", key2).then((c) => expect(c).toBe(OK)),
            routes: ["10.0.1.0/24", "10.0.2.0/24"],
            then: { type: "INSERT", code: ALREADY_EXISTS },
          },
          {
            what: "--commands delete again",
            run: () => command("delete ip:r forward 1", /^deleted ip\.r forward row 1 /m),
            routes: ["10.0.1.0/24"],
            then: { type: "MODIFY", code: NOT_FOUND },
          },
          {
            what: "--commands insert",
            run: () => command("insert ip:r forward 1", /^inserted ip\.r forward row 1 /m),
            routes: ["10.0.1.0/24", "10.0.2.0/24"],
            then: { type: "INSERT", code: ALREADY_EXISTS },
          },
          {
            what: "a reload without the route",
            run: async () => {
              writeFileSync(spec, text.replace(route2, ""));
              await command("reload", /^reloaded .*: 0 rows inserted, 0 modified, 1 deleted/m);
            },
            routes: ["10.0.1.0/24"],
            then: { type: "DELETE", code: NOT_FOUND },
          },
          {
            what: "a reload with the route again",
            run: async () => {
              writeFileSync(spec, text);
              await command("reload", /^reloaded .*: 1 rows inserted, 0 modified, 0 deleted/m);
            },
            routes: ["10.0.1.0/24", "10.0.2.0/24"],
          },
          {
            what: "a reload that sends the route out of link 1",
            run: async () => {
              writeFileSync(spec, text.replace(route2, route2.replace("out: 2", "out: 1")));
              await command("reload", /^reloaded .*: 0 rows inserted, 1 modified, 0 deleted/m);
              const now = (await read()).find((te) => prefix(te) === "10.0.2.0/24") ?? {};
              const route1 = (await read()).find((te) => prefix(te) === "10.0.1.0/24") ?? {};
              // Read has the new action: route 1's (out 1), not the one the export wrote for route 2.
              expect(now.action).toEqual(route1.action);
              expect(now.action).not.toEqual(key2.action);
            },
            routes: ["10.0.1.0/24", "10.0.2.0/24"],
            then: { type: "DELETE", code: OK },
          },
        ];
        for (const step of steps) {
          await step.run();
          expect([step.what, await routes()]).toEqual([step.what, step.routes]);
          if (step.then !== undefined)
            expect([step.what, step.then.type, await write(step.then.type, key2)]).toEqual([
              step.what,
              step.then.type,
              step.then.code,
            ]);
        }
        // The controller's last DELETE took the row out of the data plane: the command cannot delete it again.
        await command(
          "delete ip:r forward 1",
          /^strata: cannot delete ip\.r forward row 1 .*: it is not in the table/m,
        );
        expect(io.stderr.text).not.toMatch(/p4runtime: device/);
        // A reload that changes a table's match kind changes the device's P4Info: its entities are not followed, and it
        // says so.
        writeFileSync(spec, text.replace("kind: lpm", "kind: ternary"));
        await command("reload", /^reloaded .*: .*1 tables built/m);
        await said(
          new RegExp(
            [
              String.raw`^strata: p4runtime: device 2 \(r\): the reload changed its P4Info; its`,
              String.raw` entities are left as they were \(restart strata serve to serve the`,
              String.raw` new one\)$`,
            ].join(""),
            "m",
          ),
        );
        expect(io.stderr.text).not.toMatch(/p4runtime: device [13]/);
        await command("stop", /^stopping$/m);
        expect(await done).toBe(0);
      } finally {
        stream.close();
        client.close();
        commands.end();
      }
    },
  );
});
