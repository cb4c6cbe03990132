// Updates a device refuses, against a P4Runtime device of the test's own (the official
// definitions in test/fixtures/p4runtime, nothing of src/p4runtime): it takes the pipeline and
// refuses the updates the case names, with a p4.v1.Error each. deploy writes the rest, says each
// refused update in one line with the description row it came from, and exits 1.

import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { P4RUNTIME_SERVICE, ROOT, type M } from "../p4runtime/client.js";
import { exportSpec } from "../p4/helpers/examples.js";
import { deploy, spec } from "./helpers.js";

const Status = ROOT.lookupType("google.rpc.Status");
const P4Error = ROOT.lookupType("p4.v1.Error");

/** A device that is primary for everyone, runs `p4info` under a cookie of someone else's until a pipeline is set,
 * holds nothing, and refuses the updates `refuse` picks. */
async function device(
  p4info: unknown,
  refuse: (u: M) => boolean,
): Promise<{ address: string; writes: M[][]; close(): void }> {
  const server = new grpc.Server();
  const writes: M[][] = [];
  let config: M = { p4info, cookie: { cookie: "7" } };
  server.addService(P4RUNTIME_SERVICE, {
    streamChannel: (call: grpc.ServerDuplexStream<M, M>) =>
      call.on("data", (m: M) => {
        const a = m.arbitration as M | undefined;
        if (a !== undefined) call.write({ arbitration: { ...a, status: { code: 0, message: "primary" } } });
      }),
    getForwardingPipelineConfig: (_c: unknown, cb: grpc.sendUnaryData<M>) => cb(null, { config }),
    setForwardingPipelineConfig: (c: grpc.ServerUnaryCall<M, M>, cb: grpc.sendUnaryData<M>) => {
      config = c.request.config as M;
      cb(null, {});
    },
    read: (call: grpc.ServerWritableStream<M, M>) => call.end(),
    write: (c: grpc.ServerUnaryCall<M, M>, cb: grpc.sendUnaryData<M>) => {
      const updates = (c.request.updates ?? []) as M[];
      writes.push(updates);
      const errors = updates.map((u) =>
        refuse(u) ? { canonicalCode: 8, message: "table is full" } : { canonicalCode: 0 },
      );
      if (errors.every((e) => e.canonicalCode === 0)) return cb(null, {});
      const metadata = new grpc.Metadata();
      const details = errors.map((e) => ({
        type_url: "type.googleapis.com/p4.v1.Error",
        value: P4Error.encode(P4Error.fromObject(e)).finish(),
      }));
      metadata.set(
        "grpc-status-details-bin",
        Buffer.from(Status.encode(Status.fromObject({ code: 2, message: "some failed", details })).finish()),
      );
      cb({ code: grpc.status.UNKNOWN, details: "some updates failed", metadata });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e === null ? resolve(p) : reject(e),
    ),
  );
  return { address: `127.0.0.1:${port}`, writes, close: () => server.forceShutdown() };
}

/** The line of an update the device refused: ip.r's forward row `row` (a pattern), from the description's `line`. */
const refusedRow = (row: string, line: number): RegExp =>
  new RegExp(
    `^strata: deploy: r: ip_r_forward: the device refused to insert ip\\.r forward row ${row} ` +
      `\\(.*examples/ip-router/network\\.yaml:${line}\\): RESOURCE_EXHAUSTED: table is full$`,
  );

const tableOf = (u: M): number => Number(((u.entity as M | undefined)?.tableEntry as M | undefined)?.tableId ?? 0);

let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe("updates a device refuses", () => {
  it("each said with its row; the rest written; exit 1", async () => {
    // ip.r's forward table, by its P4Info id, as the plan names it.
    let forward = -1;
    const r2 = exportSpec("examples/ip-router/network.yaml").find((ex) => ex.manifest.machine === "r");
    const dev = await device(r2?.messages.p4info, (u) => {
      if (forward < 0) return false;
      return tableOf(u) === forward;
    });
    stop = dev.close;
    const plan = await deploy([spec("ip-router"), "--target", `r=${dev.address}@2`, "--json", "--plan"]);
    const changes =
      (JSON.parse(plan.out) as { machines: { changes: { where: string; key: string }[] }[] }).machines[0]?.changes ??
      [];
    forward = Number(/^table (\d+)/.exec(changes.find((c) => c.where === "ip_r_forward")?.key ?? "")?.[1] ?? -1);
    expect(forward).toBeGreaterThan(0);

    const r = await deploy([spec("ip-router"), "--target", `r=${dev.address}@2`]);
    expect(r.code).toBe(1);
    expect(r.err.split("\n").filter((l) => l !== "")).toEqual([
      expect.stringMatching(refusedRow("0: dst 10\\.0\\.1\\.0/24 → out 1", 72)),
      expect.stringMatching(refusedRow("1: dst 10\\.0\\.2\\.0/24 → out 2", 73)),
    ]);
    expect(r.out).toMatch(
      new RegExp(
        "^r \\(127\\.0\\.0\\.1:\\d+ device 2\\): pipeline set \\(the device runs this P4Info with cookie 7, not " +
          "strata deploy's \\d+\\); 14 inserted, 1 modified, 0 deleted in 1 write; " +
          "2 refused by the device \\(above\\)\n$",
      ),
    );
    // Every update was sent, the refused ones among them.
    expect(dev.writes.flat()).toHaveLength(17);
  });
});
