// `strata deploy` through faults, onto strata's own P4Runtime server: an entry deleted behind its
// back, the description changed, the target killed and restarted empty, the connection cut and
// back, another controller primary, a device whose P4Info keys a table otherwise. Each waits for
// the line that says what happened (--watch's JSON lines), never for a time.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { compile } from "../../src/control/compile.js";
import { desiredState } from "../../src/deploy/desired.js";
import { Watch } from "../../src/deploy/watch.js";
import { loadSpec } from "../../src/description/load.js";
import { P4RuntimeClient } from "../../src/p4runtime/client.js";
import { exportP4 } from "../../src/p4/export.js";
import { Client, type M, statusCode } from "../p4runtime/client.js";
import { until } from "../helpers/wait.js";
import { canonical, deploy, held, Relay, REPO, serveEmpty, spec } from "./helpers.js";

const IP = spec("ip-router");
const POLL_MS = 100;
const tmp = mkdtempSync(join(tmpdir(), "strata-deploy-faults-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Line = {
  machine: string;
  event: string;
  words: string;
  reason?: string;
  inserted?: number;
  modified?: number;
  deleted?: number;
  pipeline?: { set: boolean };
};

/** `strata deploy SPEC --watch --json` for every machine of SPEC onto `address`, in this process. */
function watch(file: string, address: string, electionId = 1n, batch = 1000) {
  const desired = desiredState(compile(loadSpec(file)), file);
  const targets = desired.map((d) => ({ machine: d.machine, address, deviceId: BigInt(d.deviceId) }));
  const lines: Line[] = [];
  let stop = (): void => {};
  const stopped = new Promise<void>((r) => (stop = r));
  const w = new Watch(
    file,
    targets,
    { electionId, role: "", batch, connectMs: 2000 },
    POLL_MS,
    desired,
    (l) => lines.push(JSON.parse(l) as Line),
    true,
  );
  const done = w.run(stopped);
  const machines = desired.map((d) => d.machine);
  return {
    w,
    lines,
    machines,
    line: (what: string, test: (l: Line) => boolean, from = 0): Promise<Line> =>
      until(
        () => lines.slice(from).find(test),
        () => `no line: ${what}; lines: ${JSON.stringify(lines)}`,
      ),
    /** Waits until every machine has reconciled `more` more times than now. */
    settle: async (more: number): Promise<void> => {
      const now = new Map(machines.map((m) => [m, w.tallies.get(m)?.reconciliations ?? 0]));
      await until(
        () => machines.every((m) => (w.tallies.get(m)?.reconciliations ?? 0) >= (now.get(m) ?? 0) + more),
        () => `fewer than ${more} reconciliations`,
      );
    },
    stop: async (): Promise<void> => {
      stop();
      await done;
    },
  };
}

/** What each machine's device should hold after a deploy of `file`, by machine, as held() reads it. */
function wanted(
  file: string,
): Map<string, { deviceId: number; want: string[]; keyless: number[]; profiles: number[] }> {
  return new Map(
    exportP4(compile(loadSpec(file)), file).map((ex) => {
      const info = ex.messages.p4info;
      return [
        ex.manifest.machine,
        {
          deviceId: ex.manifest.deviceId,
          keyless: (info.tables ?? [])
            .filter((t) => (t.matchFields ?? []).length === 0)
            .map((t) => t.preamble?.id ?? 0),
          profiles: (info.actionProfiles ?? []).map((p) => p.preamble?.id ?? 0),
          want: [
            ...new Set((ex.messages.entries.updates ?? []).map((u) => canonical(u.entity as unknown as M))),
          ].sort(),
        },
      ];
    }),
  );
}

async function expectConverged(file: string, address: string): Promise<void> {
  for (const [machine, w] of wanted(file))
    expect(await held(address, w.deviceId, w.keyless, w.profiles), machine).toEqual(w.want);
}

const startedAll = (x: ReturnType<typeof watch>): Promise<Line[]> =>
  Promise.all(
    x.machines.map((m) =>
      x.line(`${m} started`, (l) => l.machine === m && l.event === "converged" && l.reason === "started"),
    ),
  );

/** A controller of its own role on a device of strata's server (every role there has the whole pipeline). */
async function otherController(
  address: string,
  deviceId: number,
  electionLow: number,
  role?: string,
): Promise<{ client: Client; close(): void }> {
  const client = new Client(address);
  const stream = client.stream();
  stream.arbitrate(deviceId, electionLow, role);
  expect(statusCode(await stream.next())).toBe(0);
  return {
    client,
    close: () => {
      stream.close();
      client.close();
    },
  };
}

describe("strata deploy --watch, faults", () => {
  it("an entry deleted behind its back is restored, once", async () => {
    const server = await serveEmpty(IP);
    const x = watch(IP, server.address);
    try {
      await startedAll(x);
      const other = await otherController(server.address, 2, 1, "other");
      const [entry] = await other.client.read({ deviceId: "2", entities: [{ tableEntry: {} }] });
      const te = (entry as M).tableEntry as M;
      await other.client.unary("write", {
        deviceId: "2",
        role: "other",
        electionId: { low: "1" },
        updates: [
          { type: "DELETE", entity: { tableEntry: { tableId: te.tableId, match: te.match, priority: te.priority } } },
        ],
      });
      other.close();
      const restored = await x.line("r restored", (l) => l.machine === "r" && l.reason === "drift");
      expect([restored.inserted, restored.modified, restored.deleted]).toEqual([1, 0, 0]);
      await x.settle(3);
      expect(x.lines.filter((l) => l.event === "converged" && l.reason !== "started")).toEqual([restored]);
      await expectConverged(IP, server.address);
    } finally {
      await x.stop();
      await server.close();
    }
  });

  it.each([
    {
      name: "the description changed (a line more): loaded whole, only the changed rows written",
      to: "- { match: { dst: 10.0.3.0/24 }, out: 2 }\n            - { match: { dst: 10.9.0.0/16 }, out: 2 }",
      written: [2, 0, 1],
      work: undefined,
    },
    {
      name: "a row changed in place: that member read and compiled alone, its machine's desired state alone",
      to: "- { match: { dst: 10.0.3.0/24 }, out: 2 }",
      written: [1, 0, 1],
      // One whole load when the watch began (what the edit is read against), none for the edit.
      work: { loads: 1, members: 1, machines: 1 },
    },
  ])("$name", async ({ to, written, work }) => {
    const file = join(tmp, "changed.yaml");
    const text = readFileSync(IP, "utf8");
    writeFileSync(file, text);
    const server = await serveEmpty(IP);
    const x = watch(file, server.address);
    try {
      await startedAll(x);
      if (work !== undefined) expect(x.w.work).toEqual({ loads: 1, members: 0, machines: 0 });
      const from = x.lines.length;
      const changed = text.replace("- { match: { dst: 10.0.2.0/24 }, out: 2 }", to);
      expect(changed).not.toBe(text);
      writeFileSync(file, changed);
      const line = await x.line(
        "r rewritten",
        (l) => l.machine === "r" && l.reason === "the description changed",
        from,
      );
      expect([line.inserted, line.modified, line.deleted]).toEqual(written);
      await x.settle(2);
      expect(x.lines.slice(from).filter((l) => l.event !== "converged" || l.machine !== "r")).toEqual([]);
      if (work !== undefined) expect(x.w.work).toEqual(work);
      await expectConverged(file, server.address);
    } finally {
      await x.stop();
      await server.close();
    }
  });

  it("the target killed and restarted empty: its pipeline and entries are restored", async () => {
    let server = await serveEmpty(IP);
    const x = watch(IP, server.address);
    try {
      await startedAll(x);
      const from = x.lines.length;
      await server.close();
      await Promise.all(
        x.machines.map((m) => x.line(`${m} lost`, (l) => l.machine === m && l.event === "unreachable", from)),
      );
      server = await serveEmpty(IP, server.port);
      for (const m of x.machines) {
        const l = await x.line(`${m} restored`, (y) => y.machine === m && y.event === "converged", from);
        expect(l.pipeline?.set, m).toBe(true);
      }
      await expectConverged(IP, server.address);
    } finally {
      await x.stop();
      await server.close();
    }
  });

  it("the target killed while a deploy is writing, restarted empty: restored, each entry written once", async () => {
    let server = await serveEmpty(IP);
    const port = server.port;
    // r's 17 entries in Writes of 2: the server is killed while the second Write is on its way.
    const write = P4RuntimeClient.prototype.write;
    let writes = 0;
    let killed: Promise<void> | undefined;
    const spy = vi.spyOn(P4RuntimeClient.prototype, "write").mockImplementation(function (this: P4RuntimeClient, ...a) {
      const sent = write.apply(this, a);
      if (a[0].deviceId === 2n && ++writes === 2) killed = server.close();
      return sent;
    });
    const x = watch(IP, server.address, 1n, 2);
    try {
      const lost = await x.line("r lost mid-deploy", (l) => l.machine === "r" && l.event === "unreachable");
      expect(x.lines.filter((l) => l.machine === "r" && l.event === "converged")).toEqual([]);
      await killed;
      const from = x.lines.indexOf(lost);
      server = await serveEmpty(IP, port);
      const restored = await x.line("r restored", (l) => l.machine === "r" && l.event === "converged", from);
      expect([restored.pipeline?.set, restored.inserted, restored.modified, restored.deleted]).toEqual([
        true,
        16,
        1,
        0,
      ]);
      await x.settle(2);
      expect(x.lines.filter((l) => l.event === "refused")).toEqual([]);
      expect(x.lines.filter((l) => l.machine === "r" && l.event === "converged")).toEqual([restored]);
      expect(x.w.tallies.get("r")).toMatchObject({ inserted: 16, modified: 1, deleted: 0, refused: 0, pipelines: 1 });
      await expectConverged(IP, server.address);
    } finally {
      spy.mockRestore();
      await x.stop();
      await server.close();
    }
  });

  it("the connection cut and back: reconnects and writes nothing again", async () => {
    const server = await serveEmpty(IP);
    const relay = new Relay(server.port);
    await relay.start();
    const x = watch(IP, `127.0.0.1:${relay.port}`);
    try {
      await startedAll(x);
      const from = x.lines.length;
      await relay.stop();
      await Promise.all(
        x.machines.map((m) => x.line(`${m} lost`, (l) => l.machine === m && l.event === "unreachable", from)),
      );
      await relay.start();
      await Promise.all(
        x.machines.map((m) => x.line(`${m} back`, (l) => l.machine === m && l.event === "reached", from)),
      );
      await x.settle(2);
      expect(x.lines.slice(from).filter((l) => l.event === "converged")).toEqual([]);
      expect(x.machines.map((m) => x.w.tallies.get(m)?.reconnections)).toEqual(x.machines.map(() => 1));
      await expectConverged(IP, server.address);
    } finally {
      await x.stop();
      await relay.stop();
      await server.close();
    }
  });
});

describe("strata deploy, refusals", () => {
  it("another controller with a higher election id is primary: says so, exit 3, writes nothing", async () => {
    const server = await serveEmpty(IP);
    const other = await otherController(server.address, 2, 5);
    try {
      const r = await deploy([IP, "--target", `r=${server.address}`]);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(
        /^strata: deploy: r \(.*\): another controller \(election id 5\) is primary for device 2; ours is 1: /,
      );
      expect(await held(server.address, 2, [], [])).toEqual([]);
    } finally {
      other.close();
      await server.close();
    }
  });

  it("with --watch, a backup says so and waits; the machines it is primary for converge", async () => {
    const server = await serveEmpty(IP);
    const other = await otherController(server.address, 2, 5);
    const x = watch(IP, server.address);
    try {
      const line = await x.line("r waiting", (l) => l.machine === "r" && l.event === "backup");
      expect(line.words).toMatch(
        /^another controller \(election id 5\) is primary for device 2; ours is 1: .*; waiting$/,
      );
      await Promise.all(
        ["h1", "h2"].map((m) => x.line(`${m} started`, (l) => l.machine === m && l.reason === "started")),
      );
      expect(await held(server.address, 2, [], [])).toEqual([]);
    } finally {
      await x.stop();
      other.close();
      await server.close();
    }
  });

  it("a controller holding our election id: asked again until --timeout, then said, exit 3", async () => {
    const server = await serveEmpty(IP);
    const other = await otherController(server.address, 2, 1);
    try {
      const r = await deploy([IP, "--target", `r=${server.address}`, "--timeout", "1"]);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/^strata: deploy: r \(.*\): device 2 refused our election id 1 \(.*\): /m);
      expect(r.err).toMatch(/: another controller uses it; give another --election-id$/m);
      expect(await held(server.address, 2, [], [])).toEqual([]);
    } finally {
      other.close();
      await server.close();
    }
  });

  it("two deploys at once: the one with the higher election id is primary, the other says so", async () => {
    const server = await serveEmpty(IP);
    const x = watch(IP, server.address, 2n);
    try {
      await startedAll(x);
      const r = await deploy([IP, "--target", `r=${server.address}`, "--election-id", "1"]);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/another controller \(election id 2\) is primary for device 2; ours is 1/);
      await x.settle(1);
      expect(x.lines.filter((l) => l.reason !== "started")).toEqual([]);
      await expectConverged(IP, server.address);
    } finally {
      await x.stop();
      await server.close();
    }
  });

  it("a device whose P4Info keys a table otherwise: refused with the difference named, nothing written", async () => {
    const file = join(tmp, "src-keyed.yaml");
    writeFileSync(
      file,
      readFileSync(IP, "utf8").replace(/match: \{ dst: (10\.0\.\d\.0\/24) \}/g, "match: { src: $1 }"),
    );
    const server = await serveEmpty(file);
    try {
      const r = await deploy([IP, "--target", `r=${server.address}`]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(
          "^strata: deploy: r \\(.*\\): the device runs strata-r with table ip_r_forward keyed \\(src lpm 32\\), " +
            "where the description keys it \\(dst lpm 32\\): refused, nothing written\n$",
        ),
      );
      expect(await held(server.address, 2, [], [])).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("strata deploy --watch as a process", () => {
  it("Ctrl-C stops it with a summary, exit 0", async () => {
    const server = await serveEmpty(IP);
    try {
      const child = spawn(
        process.execPath,
        [
          join(REPO, "dist/src/cli/main.js"),
          "deploy",
          IP,
          "--target",
          `r=${server.address}`,
          "--watch",
          "--poll",
          String(POLL_MS),
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      await until(
        () => / r: started: pipeline set/.test(out),
        () => `no first line: ${out}`,
      );
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(out).toMatch(
        new RegExp(
          "\nstopped: r: \\d+ reconciliations, 1 of them wrote: 16 inserted, 1 modified, 0 deleted, 0 refused; " +
            "1 pipelines set; 0 reconnections\n$",
        ),
      );
    } finally {
      await server.close();
    }
  });
});
