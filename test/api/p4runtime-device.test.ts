// The Device interface's two implementations agree: the same batches written through an Emulation and through a
// P4RuntimeDevice on strata's own P4Runtime server read back the same rows, in the description's notation, and a
// batch either refuses with the same TableWriteError (and writes nothing) on both.

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Device,
  Emulation,
  P4RuntimeDevice,
  type P4RuntimeDeviceOptions,
  type RowWrite,
  TableWriteError,
} from "../../src/index.js";
import { type Served, serve } from "./p4runtime-server.js";

const ROUTER = "examples/ip-router/network.yaml";

let server: Served;
let devices: { name: string; device: Device }[];
beforeAll(async () => {
  server = await serve(ROUTER);
  devices = [
    { name: "emulation", device: Emulation.load(ROUTER) },
    { name: "p4runtime", device: await P4RuntimeDevice.connect(ROUTER, { address: server.address }) },
  ];
});
afterAll(async () => {
  for (const d of devices ?? []) await d.device.close();
  await server?.close();
});

/** What a table holds, as both devices can say it: each entry's row, text and writer. */
async function held(device: Device, member: string, table: "forward" | "acquire"): Promise<string[]> {
  const entries = await device.read(member, table);
  return entries.map((e) => `${JSON.stringify(e.row)} ${e.text} ${e.by}`).sort();
}

const route = (op: RowWrite["op"], dst: string, out: number): RowWrite => ({
  op,
  member: "ip:r",
  table: "forward",
  row: { match: { dst }, out },
});

// In order: each case's batch written to both devices, then what ip:r's forward table holds.
const cases: { name: string; batch: RowWrite[]; refused?: { code: string; index: number }; rows: number }[] = [
  { name: "two routes", batch: [route("insert", "10.9.0.0/16", 2), route("insert", "10.8.0.0/16", 1)], rows: 4 },
  { name: "one moved", batch: [route("modify", "10.9.0.0/16", 1)], rows: 4 },
  { name: "one gone", batch: [route("delete", "10.8.0.0/16", 1)], rows: 3 },
  {
    name: "a bad row: nothing written",
    batch: [route("insert", "10.7.0.0/16", 2), route("insert", "10.6.0.0/16", 7)],
    refused: { code: "BadRow", index: 1 },
    rows: 3,
  },
  {
    name: "a duplicate: nothing written",
    batch: [route("insert", "10.5.0.0/16", 2), route("insert", "10.9.0.0/16", 2)],
    refused: { code: "DuplicateEntry", index: 1 },
    rows: 3,
  },
  {
    name: "no such entry: nothing written",
    batch: [route("insert", "10.5.0.0/16", 2), route("delete", "10.4.0.0/16", 2)],
    refused: { code: "NotFound", index: 1 },
    rows: 3,
  },
  {
    name: "a member on another machine too",
    batch: [
      route("insert", "10.5.0.0/16", 2),
      {
        op: "insert",
        member: "lanA:h1",
        table: "acquire",
        row: { match: { dst: "02:00:00:00:0a:02" }, do: "receive" },
      },
    ],
    rows: 4,
  },
];

describe("the same batches through an Emulation and a P4RuntimeDevice", () => {
  test.each(cases)("$name", async ({ batch, refused, rows }) => {
    const seen: string[][] = [];
    for (const { name, device } of devices) {
      const error = await device.write(batch).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (refused === undefined) expect(error, name).toBeUndefined();
      else {
        expect(error, name).toBeInstanceOf(TableWriteError);
        const e = error as TableWriteError;
        expect({ code: e.code, index: e.index, member: e.member }, `${name}: ${e.message}`).toEqual({
          ...refused,
          member: batch[refused.index]?.member,
        });
      }
      const forward = await held(device, "ip:r", "forward");
      expect(forward, name).toHaveLength(rows);
      seen.push([...forward, ...(await held(device, "lanA:h1", "acquire"))]);
    }
    expect(seen[1]).toEqual(seen[0]);
  });
});

describe("what a P4RuntimeDevice refuses", () => {
  test("a packet-out on a link: P4Runtime's packet_out names a member, not a link", async () => {
    const p4 = devices[1]?.device as P4RuntimeDevice;
    await expect(p4.packetOut({ at: "lanA:h1.1", data: new Uint8Array(60) })).rejects.toThrow(
      /enters at a member \(NETWORK:MEMBER\) or in its session/,
    );
  });

  test("a second controller with a lower election id is not the primary: connect rejects", async () => {
    // Ours is 1; another with 5 takes the devices, and one with 2 is refused.
    const other = await P4RuntimeDevice.connect(ROUTER, { address: server.address, electionId: 5n });
    try {
      await expect(P4RuntimeDevice.connect(ROUTER, { address: server.address, electionId: 2n })).rejects.toThrow(
        /another controller is primary \(election id 5, ours 2\)/,
      );
    } finally {
      await other.close();
    }
  });
});

// Where each machine's device is: a server per machine (machines), or some by name and the rest at address; a machine
// left with none, or one the description has not, is a RangeError before anything is connected. (Election id 9: above
// the devices' of the cases above, which are done.)
const places: {
  name: string;
  options: (address: string) => P4RuntimeDeviceOptions;
  error?: RegExp;
}[] = [
  { name: "every machine by name", options: (a) => ({ machines: { h1: a, r: a, h2: a } }) },
  { name: "one by name, the rest at address", options: (a) => ({ address: a, machines: { r: a } }) },
  {
    name: "a machine with no server",
    options: (a) => ({ machines: { h1: a, r: a } }),
    error: /^machine h2: no P4Runtime server \(give address, or machines\.h2\)$/,
  },
  {
    name: "a machine the description has not",
    options: (a) => ({ address: a, machines: { r9: a } }),
    error: /^machines: no machine 'r9' in the description \(h1, r, h2\)$/,
  },
];

describe.each(places)("P4RuntimeDevice.connect: $name", ({ options, error }) => {
  test(error === undefined ? "connects to every machine's device" : "is refused", async () => {
    const o = options(server.address);
    if (error !== undefined) {
      await expect(P4RuntimeDevice.connect(ROUTER, o)).rejects.toThrow(error);
      return;
    }
    const device = await P4RuntimeDevice.connect(ROUTER, { ...o, electionId: 9n });
    try {
      expect((await device.read("ip:r", "forward")).length).toBeGreaterThan(0);
    } finally {
      await device.close();
    }
  });
});
