// The entry ledger (src/control/ledger.ts) as the one record of what the tables
// hold: each writer's entry — the description's, a P4Runtime controller's,
// `--commands`' — is read back by each reader (a P4Runtime Read, what serve's
// status and the summary read, a reload's reconcile), and who wrote it is kept
// across a reload. The IP router's r, served over real gRPC on localhost.

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { loadSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { EngineEmulation, P4RUNTIME_OUTPUTS } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { runCommand } from "../../src/serve/control.js";
import { Client, type M } from "../p4runtime/client.js";
import { election, FORWARD, OUT, primary, R, route, SPEC } from "../p4runtime/ip-router.js";

const TEXT = readFileSync(SPEC, "utf8");
const ROUTE1 = "- { match: { dst: 10.0.1.0/24 }, out: 1 }";
const ROUTE2 = "            - { match: { dst: 10.0.2.0/24 }, out: 2 }\n";

/** The example with its text changed, compiled. */
function described(change: (text: string) => string = (t) => t): CompiledSpec {
  const file = join(mkdtempSync(join(tmpdir(), "strata-ledger-")), "network.yaml");
  writeFileSync(file, change(TEXT));
  return compile(loadSpec(file));
}
const WITHOUT_ROUTE2 = (t: string): string => t.replace(ROUTE2, "");
const ROUTE1_OUT2 = (t: string): string => t.replace(ROUTE1, ROUTE1.replace("out: 1", "out: 2"));

interface World {
  readonly em: Engine;
  readonly client: Client;
  /** r's forward entries over P4Runtime, as prefixes ("10.0.2.0/24"). */
  routes(): Promise<string[]>;
  /** Who wrote r's forward entry for a prefix, as the ledger says (undefined: none holds it). */
  by(prefix: string): string | undefined;
  /** Whether the description in force has a row for the prefix that is installed (what the summary's row hits read). */
  installed(prefix: string): boolean;
  write(type: string, entity: M): Promise<void>;
}

const forwardTable = (em: Engine): CompiledSpec["tables"][number] => {
  const t = em.installed.compiled.members.find((m) => m.qualified === "ip.r")?.tables.forward;
  if (t === undefined) throw new Error("no ip.r forward table");
  return t;
};
const prefixOfRow = (text: string): string => /dst (\S+)/.exec(text)?.[1] ?? "?";
const dotted = (v: Uint8Array, len: number): string => `${[...v.subarray(0, 4)].join(".")}/${len}`;

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function world(): Promise<World> {
  // As `strata serve --p4runtime` opens it: the description installed by the engine, the server over it.
  const em = Engine.open({ compiled: described() });
  em.connect(P4RUNTIME_OUTPUTS);
  const server = await P4RuntimeServer.start(new EngineEmulation(em), { address: "127.0.0.1:0", warn: () => {} });
  const client = new Client(`127.0.0.1:${server.port}`);
  const stream = await primary(client, R, 1);
  opened.push(async () => {
    stream.close();
    client.close();
    await server.close();
    em.stop();
  });
  const ledgerEntries = (): [string, string][] => {
    const t = forwardTable(em);
    const dst = t.fields.find((f) => f.name === "dst") ?? t.fields[0];
    if (dst === undefined) throw new Error("the forward table matches no field");
    const field = (b: Uint8Array): Uint8Array => b.subarray(dst.offset, dst.offset + dst.len);
    return [...em.ledger.entries(t.id).values()].map((e) => {
      const mask = [...field(e.match.mask)].reduce((n, b) => n + b.toString(2).replace(/0/g, "").length, 0);
      return [dotted(field(e.match.value), mask), e.by];
    });
  };
  return {
    em,
    client,
    routes: async () =>
      (await client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: FORWARD } }] }))
        .map((e) => {
          const lpm = ((e.tableEntry as M).match as M[])[0]?.lpm as M;
          return dotted(lpm.value as Buffer, Number(lpm.prefixLen));
        })
        .sort(),
    by: (prefix) => ledgerEntries().find(([p]) => p === prefix)?.[1],
    installed: (prefix) => {
      const t = forwardTable(em);
      const k = t.rows.findIndex((r) => prefixOfRow(r.text) === prefix);
      return k >= 0 && (em.installed.entries.get(t.id)?.[k] ?? -1) >= 0;
    },
    write: async (type, entity) => {
      await client.unary("write", { deviceId: String(R), electionId: election(1), updates: [{ type, entity }] });
    },
  };
}

const BOTH = ["10.0.1.0/24", "10.0.2.0/24"];

describe("the ledger: each writer's entry, read by each reader", () => {
  const cases: {
    name: string;
    run: (w: World) => Promise<unknown>;
    routes: string[];
    by: Record<string, string | undefined>;
    installed: Record<string, boolean>;
  }[] = [
    {
      name: "a description row is read over P4Runtime and installed as the row",
      run: async () => {},
      routes: BOTH,
      by: { "10.0.1.0/24": "description", "10.0.2.0/24": "description" },
      installed: { "10.0.1.0/24": true, "10.0.2.0/24": true },
    },
    {
      name: "a P4Runtime write of a route the description lacks: read back, in the ledger as the controller's",
      run: (w) => w.write("INSERT", route([10, 0, 9, 0], 24, 1)),
      routes: [...BOTH, "10.0.9.0/24"],
      by: { "10.0.9.0/24": "p4runtime", "10.0.2.0/24": "description" },
      installed: { "10.0.2.0/24": true },
    },
    {
      name: "…kept by a reload's reconcile that changes another row",
      run: async (w) => {
        await w.write("INSERT", route([10, 0, 9, 0], 24, 1));
        await w.em.between(() => w.em.reconcile(described(ROUTE1_OUT2)));
      },
      routes: [...BOTH, "10.0.9.0/24"],
      by: { "10.0.9.0/24": "p4runtime", "10.0.1.0/24": "description" },
      installed: { "10.0.1.0/24": true, "10.0.2.0/24": true },
    },
    {
      name:
        "a P4Runtime write of a description row installs that row (serve's status counts it), " +
        "and a reload keeps who wrote it",
      run: async (w) => {
        await w.write("DELETE", route([10, 0, 2, 0], 24, 2));
        await w.write("INSERT", route([10, 0, 2, 0], 24, 2));
        await w.em.between(() => w.em.reconcile(described(ROUTE1_OUT2)));
      },
      routes: BOTH,
      by: { "10.0.2.0/24": "p4runtime", "10.0.1.0/24": "description" },
      installed: { "10.0.1.0/24": true, "10.0.2.0/24": true },
    },
    {
      name: "a --commands delete is read over P4Runtime",
      run: (w) => runCommand(w.em, "delete ip:r forward 1").then((r) => expect(r.ok).toBe(true)),
      routes: ["10.0.1.0/24"],
      by: { "10.0.2.0/24": undefined },
      installed: { "10.0.2.0/24": false },
    },
    {
      name: "a --commands insert is read over P4Runtime, in the ledger as the commands'",
      run: async (w) => {
        await runCommand(w.em, "delete ip:r forward 1");
        expect((await runCommand(w.em, "insert ip:r forward 1")).ok).toBe(true);
      },
      routes: BOTH,
      by: { "10.0.2.0/24": "commands" },
      installed: { "10.0.2.0/24": true },
    },
    {
      name: "a reload that removes a description row removes it everywhere",
      run: (w) => w.em.between(() => w.em.reconcile(described(WITHOUT_ROUTE2))),
      routes: ["10.0.1.0/24"],
      by: { "10.0.2.0/24": undefined, "10.0.1.0/24": "description" },
      installed: { "10.0.1.0/24": true, "10.0.2.0/24": false },
    },
    {
      name: "a reload that removes a row a controller wrote again removes it too",
      run: async (w) => {
        await w.write("DELETE", route([10, 0, 2, 0], 24, 2));
        await w.write("INSERT", route([10, 0, 2, 0], 24, 2));
        await w.em.between(() => w.em.reconcile(described(WITHOUT_ROUTE2)));
      },
      routes: ["10.0.1.0/24"],
      by: { "10.0.2.0/24": undefined },
      installed: { "10.0.2.0/24": false },
    },
  ];
  it.each(cases)("$name", async ({ run, routes, by, installed }) => {
    const w = await world();
    await run(w);
    expect(await w.routes()).toEqual(routes);
    const prefixes = Object.keys(by);
    expect(Object.fromEntries(prefixes.map((p) => [p, w.by(p)]))).toEqual(by);
    const rows = Object.keys(installed);
    expect(Object.fromEntries(rows.map((p) => [p, w.installed(p)]))).toEqual(installed);
  });
});

describe("P4Runtime reads the ledger's entries, whoever wrote them", () => {
  /** r's forward entries as a Read gives them: prefix, table and action ids, out-link, cookie. */
  const read = async (w: World): Promise<string[]> =>
    (await w.client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: FORWARD } }] }))
      .map((e) => {
        const te = e.tableEntry as M;
        const lpm = (te.match as M[])[0]?.lpm as M;
        const action = (te.action as M).action as M;
        const out = [...(((action.params as M[])[0]?.value as Buffer | undefined) ?? [])].join(".");
        const table = String(te.tableId) === String(FORWARD) ? "forward" : String(te.tableId);
        const id = String(action.actionId) === String(OUT) ? "forward_out" : String(action.actionId);
        const prefix = dotted(lpm.value as Buffer, Number(lpm.prefixLen));
        return `${prefix} ${table} ${id}(${out}) cookie ${String(te.controllerMetadata ?? "0")}`;
      })
      .sort();
  /** A route of r's forward table written by a program through the library: row 0's, its dst's third byte `third`. */
  const apiRoute = (w: World, third: number): void => {
    const t = forwardTable(w.em);
    const row = t.rows[0];
    const dst = t.fields.find((f) => f.name === "dst");
    if (row === undefined || dst === undefined) throw new Error("no route");
    const value = row.match.value.slice();
    value[dst.offset + 2] = third;
    const result = w.em.write([{ op: "insert", table: t, match: { ...row.match, value }, action: row.action }], "api");
    expect(result.ok).toBe(true);
  };
  const cases: { name: string; run: (w: World) => Promise<unknown>; read: string[] }[] = [
    {
      name: "the description's rows, as the export writes them",
      run: async () => {},
      read: ["10.0.1.0/24 forward forward_out(1) cookie 0", "10.0.2.0/24 forward forward_out(2) cookie 0"],
    },
    {
      name: "a --commands insert: the row with its P4 ids and match",
      run: async (w) => {
        await runCommand(w.em, "delete ip:r forward 0");
        expect((await runCommand(w.em, "insert ip:r forward 0")).ok).toBe(true);
      },
      read: ["10.0.1.0/24 forward forward_out(1) cookie 0", "10.0.2.0/24 forward forward_out(2) cookie 0"],
    },
    {
      name: "a program's entry through the library (not a row of the description)",
      run: (w) => w.em.between(() => apiRoute(w, 7)),
      read: [
        "10.0.1.0/24 forward forward_out(1) cookie 0",
        "10.0.2.0/24 forward forward_out(2) cookie 0",
        "10.0.7.0/24 forward forward_out(1) cookie 0",
      ],
    },
    {
      name: "a controller's cookie, kept when --commands deletes another entry of the table",
      run: async (w) => {
        await w.write("INSERT", route([10, 0, 9, 0], 24, 2, { controllerMetadata: "77" }));
        expect((await runCommand(w.em, "delete ip:r forward 0")).ok).toBe(true);
      },
      read: ["10.0.2.0/24 forward forward_out(2) cookie 0", "10.0.9.0/24 forward forward_out(2) cookie 77"],
    },
    {
      name: "a controller's cookie on a description row, kept by a reload that changes another row",
      run: async (w) => {
        await w.write("MODIFY", route([10, 0, 2, 0], 24, 2, { controllerMetadata: "5" }));
        await w.em.between(() => w.em.reconcile(described(ROUTE1_OUT2)));
      },
      read: ["10.0.1.0/24 forward forward_out(2) cookie 0", "10.0.2.0/24 forward forward_out(2) cookie 5"],
    },
    {
      name: "a controller's MODIFY of the library's entry: its action and cookie",
      run: async (w) => {
        await w.em.between(() => apiRoute(w, 7));
        await w.write("MODIFY", route([10, 0, 7, 0], 24, 2, { controllerMetadata: "9" }));
      },
      read: [
        "10.0.1.0/24 forward forward_out(1) cookie 0",
        "10.0.2.0/24 forward forward_out(2) cookie 0",
        "10.0.7.0/24 forward forward_out(2) cookie 9",
      ],
    },
  ];
  it.each(cases)("$name", async ({ run, read: want }) => {
    const w = await world();
    await run(w);
    expect(await read(w)).toEqual(want);
  });
});
