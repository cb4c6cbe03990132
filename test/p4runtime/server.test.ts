// strata's P4Runtime server over real gRPC on a localhost port, driven by a
// client built from the official definitions (./client.ts): arbitration, the
// pipeline config, Write's per-update errors and atomicity, Read, malformed
// requests, and a controller session that installs the IP router example's
// entries on empty devices and then passes traffic, compared with a replay.

import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type protobuf from "protobufjs";
import protojson from "protobufjs/ext/protojson.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { exportP4, type MachineExport } from "../../src/p4/export.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer, PACKET_IN_QUEUE } from "../../src/p4runtime/server.js";
import { replay } from "../../src/run/replay.js";
import { Client, type M, ROOT, statusCode, type Stream } from "./client.js";
import { pcapPackets } from "../pcap/builders.js";
import {
  ABORTED,
  ALREADY_EXISTS,
  actionId,
  election,
  exports,
  FAILED_PRECONDITION,
  FORWARD,
  INVALID_ARGUMENT,
  machine,
  NOT_FOUND,
  OK,
  OUT,
  p4info,
  PERMISSION_DENIED,
  primary,
  R,
  route,
  SPEC,
  serve,
  UNKNOWN,
} from "./ip-router.js";
import { until } from "../helpers/wait.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

describe("arbitration", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(true);
  });
  afterAll(async () => {
    await s.server.close();
  });

  test(
    "the highest election id is primary; a higher one takes over; the " + "backups hear it; a backup cannot write",
    async () => {
      const a = new Client(s.address);
      const b = new Client(s.address);
      const c = new Client(s.address);
      const sa = await primary(a, R, 5);
      const sb = b.stream();
      sb.arbitrate(R, 3);
      const backup = await sb.next();
      expect(statusCode(backup)).toBe(ALREADY_EXISTS);
      expect((backup.arbitration as M).electionId).toEqual(election(5));
      // A write from the backup, or with no election id, is denied; the primary's goes through.
      await expect(
        b.unary("write", {
          deviceId: String(R),
          electionId: election(3),
          updates: [{ type: "INSERT", entity: route([10, 9, 0, 0], 16, 1) }],
        }),
      ).rejects.toMatchObject({ code: PERMISSION_DENIED });
      await expect(b.unary("write", { deviceId: String(R), updates: [] })).rejects.toMatchObject({
        code: PERMISSION_DENIED,
      });
      await expect(
        a.unary("write", {
          deviceId: String(R),
          electionId: election(5),
          updates: [{ type: "INSERT", entity: route([10, 9, 0, 0], 16, 1) }],
        }),
      ).resolves.toEqual({});
      // The same id as a live stream ends the newcomer's stream.
      const dup = c.stream();
      dup.arbitrate(R, 5);
      expect(((await dup.next()).streamError as M).code).toBe(INVALID_ARGUMENT);
      // A higher id takes over: every stream of the device hears the new primary.
      const sc = c.stream();
      sc.arbitrate(R, 9);
      expect(statusCode(await sc.next())).toBe(OK);
      const told = await sa.next();
      expect(statusCode(told)).toBe(ALREADY_EXISTS);
      expect((told.arbitration as M).electionId).toEqual(election(9));
      expect(statusCode(await sb.next())).toBe(ALREADY_EXISTS);
      await expect(
        a.unary("write", { deviceId: String(R), electionId: election(5), updates: [] }),
      ).rejects.toMatchObject({ code: PERMISSION_DENIED });
      // The primary leaves: the others hear there is none, and the old one does not come back by itself.
      sc.close();
      expect(statusCode(await sa.next())).toBe(NOT_FOUND);
      expect(statusCode(await sb.next())).toBe(NOT_FOUND);
      await expect(
        a.unary("write", { deviceId: String(R), electionId: election(5), updates: [] }),
      ).rejects.toMatchObject({ code: PERMISSION_DENIED });
      // A stream does not change device; an unknown device ends it.
      sa.arbitrate(R + 1, 5);
      expect(((await sa.next()).streamError as M).code).toBe(FAILED_PRECONDITION);
      const nowhere = c.stream();
      nowhere.arbitrate(99, 1);
      expect(((await nowhere.next()).streamError as M).code).toBe(NOT_FOUND);
      sb.close();
      for (const x of [a, b, c]) x.close();
    },
  );
});

describe("pipeline config", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let client: Client;
  beforeAll(async () => {
    s = await serve(true);
    client = new Client(s.address);
  });
  afterAll(async () => {
    client.close();
    await s.server.close();
  });

  test.each(exports.map((e) => [e.manifest.machine, e.manifest.deviceId] as const))(
    "GetForwardingPipelineConfig of %s (device %d) is the export's P4Info, byte for byte",
    async (name, id) => {
      const Request = ROOT.lookupType("p4.v1.GetForwardingPipelineConfigRequest");
      const Response = ROOT.lookupType("p4.v1.GetForwardingPipelineConfigResponse");
      const P4Info = ROOT.lookupType("p4.config.v1.P4Info");
      const raw = await client.unaryRaw(
        "GetForwardingPipelineConfig",
        Request.encode(Request.fromObject({ deviceId: id })).finish(),
      );
      const got = (Response.decode(raw) as unknown as { config: { p4info: protobuf.Message } }).config.p4info;
      const want = P4Info.encode(protojson.fromJson(P4Info, p4info(name))).finish();
      expect(Buffer.from(P4Info.encode(got).finish()).equals(Buffer.from(want))).toBe(true);
    },
  );

  test("SetForwardingPipelineConfig takes the exported P4Info and refuses another", async () => {
    const stream = await primary(client, R, 1);
    const got = (await client.unary("getForwardingPipelineConfig", { deviceId: String(R) })).config as M;
    const set = (action: string, info: M): Promise<M> =>
      client.unary("setForwardingPipelineConfig", {
        deviceId: String(R),
        electionId: election(1),
        action,
        config: { p4info: info },
      });
    await expect(set("VERIFY", got.p4info as M)).resolves.toEqual({});
    await expect(set("VERIFY_AND_COMMIT", got.p4info as M)).resolves.toEqual({});
    const other = { ...(got.p4info as M), tables: ((got.p4info as M).tables as M[]).slice(1) };
    await expect(set("VERIFY_AND_COMMIT", other)).rejects.toMatchObject({ code: INVALID_ARGUMENT });
    await expect(set("COMMIT", got.p4info as M)).rejects.toMatchObject({ code: 12 });
    await expect(
      client.unary("setForwardingPipelineConfig", {
        deviceId: String(R),
        electionId: election(2),
        action: "VERIFY",
        config: { p4info: got.p4info },
      }),
    ).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(client.unary("getForwardingPipelineConfig", { deviceId: "77" })).rejects.toMatchObject({
      code: NOT_FOUND,
    });
    stream.close();
  });
});

describe("Write and Read", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let client: Client;
  let stream: Stream;
  const write = (updates: M[], atomicity?: string): Promise<M> =>
    client.unary("write", {
      deviceId: String(R),
      electionId: election(1),
      updates,
      ...(atomicity !== undefined ? { atomicity } : {}),
    });
  const codes = async (updates: M[], atomicity?: string): Promise<number[]> => {
    try {
      await write(updates, atomicity);
      return updates.map(() => OK);
    } catch (e) {
      const err = e as { code: number; errors: { canonicalCode: number }[] };
      expect(err.code).toBe(UNKNOWN);
      return err.errors.map((x) => x.canonicalCode);
    }
  };
  const routes = async (): Promise<string[]> =>
    (await client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: FORWARD } }] })).map((e) => {
      const m = ((e.tableEntry as M).match as M[])[0]?.lpm as M;
      return `${[...(m.value as Buffer)].join(".")}/${String(m.prefixLen)}`;
    });
  beforeAll(async () => {
    s = await serve(true);
    client = new Client(s.address);
    stream = await primary(client, R, 1);
  });
  afterAll(async () => {
    stream.close();
    client.close();
    await s.server.close();
  });

  const A = route([10, 1, 0, 0], 16, 1);
  const B = route([10, 2, 0, 0], 16, 2);
  const C = route([10, 3, 0, 0], 16, 2);
  const badTable = { tableEntry: { ...(A.tableEntry as M), tableId: 0x02000001 } };
  const cases: { name: string; updates: M[]; atomicity?: string; codes: number[]; after: string[] }[] = [
    { name: "INSERT", updates: [{ type: "INSERT", entity: A }], codes: [OK], after: ["10.1.0.0/16"] },
    {
      name: "a second INSERT of the same match",
      updates: [{ type: "INSERT", entity: A }],
      codes: [ALREADY_EXISTS],
      after: ["10.1.0.0/16"],
    },
    {
      name: "MODIFY of an absent entry",
      updates: [{ type: "MODIFY", entity: B }],
      codes: [NOT_FOUND],
      after: ["10.1.0.0/16"],
    },
    {
      name: "DELETE of an absent entry",
      updates: [{ type: "DELETE", entity: B }],
      codes: [NOT_FOUND],
      after: ["10.1.0.0/16"],
    },
    {
      name: "MODIFY",
      updates: [{ type: "MODIFY", entity: route([10, 1, 0, 0], 16, 2) }],
      codes: [OK],
      after: ["10.1.0.0/16"],
    },
    {
      name: "CONTINUE_ON_ERROR applies the good updates",
      updates: [
        { type: "INSERT", entity: B },
        { type: "INSERT", entity: badTable },
        { type: "INSERT", entity: A },
      ],
      codes: [OK, INVALID_ARGUMENT, ALREADY_EXISTS],
      after: ["10.1.0.0/16", "10.2.0.0/16"],
    },
    {
      name: "ROLLBACK_ON_ERROR applies none",
      updates: [
        { type: "INSERT", entity: C },
        { type: "DELETE", entity: A },
        { type: "INSERT", entity: B },
      ],
      atomicity: "ROLLBACK_ON_ERROR",
      codes: [ABORTED, ABORTED, ALREADY_EXISTS],
      after: ["10.1.0.0/16", "10.2.0.0/16"],
    },
    {
      name: "DATAPLANE_ATOMIC applies all",
      updates: [
        { type: "INSERT", entity: C },
        { type: "DELETE", entity: A },
      ],
      atomicity: "DATAPLANE_ATOMIC",
      codes: [OK, OK],
      after: ["10.2.0.0/16", "10.3.0.0/16"],
    },
    { name: "DELETE", updates: [{ type: "DELETE", entity: C }], codes: [OK], after: ["10.2.0.0/16"] },
    // Malformed entries: each refused, nothing changes.
    {
      name: "a value wider than its field",
      updates: [{ type: "INSERT", entity: route([1, 10, 4, 0, 0], 24, 1) }],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "bits past the prefix",
      updates: [{ type: "INSERT", entity: route([10, 4, 0, 1], 24, 1) }],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "a prefix longer than the field",
      updates: [{ type: "INSERT", entity: route([10, 4, 0, 0], 33, 1) }],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "an unknown action",
      updates: [
        {
          type: "INSERT",
          entity: { tableEntry: { ...(A.tableEntry as M), action: { action: { actionId: 0x01000001 } } } },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "an action of another table",
      updates: [
        {
          type: "INSERT",
          entity: {
            tableEntry: { ...(A.tableEntry as M), action: { action: { actionId: actionId("acquire_forward") } } },
          },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "a missing parameter",
      updates: [
        { type: "INSERT", entity: { tableEntry: { ...(A.tableEntry as M), action: { action: { actionId: OUT } } } } },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "a field id the table lacks",
      updates: [
        {
          type: "INSERT",
          entity: {
            tableEntry: {
              ...(A.tableEntry as M),
              match: [{ fieldId: 7, lpm: { value: Buffer.from([10]), prefixLen: 8 } }],
            },
          },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "the wrong match kind",
      updates: [
        {
          type: "INSERT",
          entity: {
            tableEntry: {
              ...(A.tableEntry as M),
              match: [{ fieldId: 1, exact: { value: Buffer.from([10, 0, 0, 0]) } }],
            },
          },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "a priority in an LPM table",
      updates: [{ type: "INSERT", entity: route([10, 5, 0, 0], 16, 1, { priority: 5 }) }],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    {
      name: "an empty bytestring",
      updates: [
        {
          type: "INSERT",
          entity: {
            tableEntry: {
              ...(A.tableEntry as M),
              match: [{ fieldId: 1, lpm: { value: Buffer.alloc(0), prefixLen: 8 } }],
            },
          },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
    { name: "no update type", updates: [{ entity: A }], codes: [INVALID_ARGUMENT], after: ["10.2.0.0/16"] },
    { name: "no entity", updates: [{ type: "INSERT" }], codes: [INVALID_ARGUMENT], after: ["10.2.0.0/16"] },
    {
      name: "a counter entry (not written by strata)",
      updates: [{ type: "MODIFY", entity: { counterEntry: { counterId: 1 } } }],
      codes: [12],
      after: ["10.2.0.0/16"],
    },
    {
      name: "a multicast group on a port the device lacks",
      updates: [
        {
          type: "INSERT",
          entity: {
            packetReplicationEngineEntry: {
              multicastGroupEntry: { multicastGroupId: 1, replicas: [{ port: Buffer.from([99]), instance: 1 }] },
            },
          },
        },
      ],
      codes: [INVALID_ARGUMENT],
      after: ["10.2.0.0/16"],
    },
  ];
  // The cases run in order: each starts from the table the one before left.
  test.each(cases)("$name", async (c) => {
    expect(await codes(c.updates, c.atomicity)).toEqual(c.codes);
    expect((await routes()).sort()).toEqual(c.after);
  });

  test("multicast groups: INSERT, a duplicate, MODIFY, Read, DELETE", async () => {
    const port = machine("r").manifest.ports[0]?.port ?? 1;
    const group = (replicas: number[]): M => ({
      packetReplicationEngineEntry: {
        multicastGroupEntry: {
          multicastGroupId: 4,
          replicas: replicas.map((i) => ({ port: Buffer.from([port]), instance: i })),
        },
      },
    });
    expect(
      await codes([
        { type: "INSERT", entity: group([1]) },
        { type: "INSERT", entity: group([2]) },
      ]),
    ).toEqual([OK, ALREADY_EXISTS]);
    expect(await codes([{ type: "MODIFY", entity: group([1, 2]) }])).toEqual([OK]);
    const read = await client.read({
      deviceId: String(R),
      entities: [{ packetReplicationEngineEntry: { multicastGroupEntry: {} } }],
    });
    expect(
      read.map((e) =>
        (((e.packetReplicationEngineEntry as M).multicastGroupEntry as M).replicas as M[]).map((r) => [
          [...(r.port as Buffer)],
          r.instance,
        ]),
      ),
    ).toEqual([
      [
        [[port], 1],
        [[port], 2],
      ],
    ]);
    expect(
      await codes([
        { type: "DELETE", entity: group([]) },
        { type: "DELETE", entity: group([]) },
      ]),
    ).toEqual([OK, NOT_FOUND]);
  });

  test("Read: all tables, one table, one entry; an unknown table is NOT_FOUND or INVALID_ARGUMENT", async () => {
    expect((await client.read({ deviceId: String(R), entities: [{ tableEntry: {} }] })).length).toBe(1);
    const one = await client.read({
      deviceId: String(R),
      entities: [{ tableEntry: { tableId: FORWARD, match: (B.tableEntry as M).match } }],
    });
    expect(one.length).toBe(1);
    expect((((one[0]?.tableEntry as M).action as M).action as M).actionId).toBe(OUT);
    await expect(
      client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: 0x02000001 } }] }),
    ).rejects.toMatchObject({ code: INVALID_ARGUMENT });
    await expect(client.read({ deviceId: "77", entities: [] })).rejects.toMatchObject({ code: NOT_FOUND });
  });

  test("a message that does not decode is refused and the server carries on", async () => {
    // gRPC refuses what does not decode (INTERNAL) before the server sees it; a decodable Write would be
    // PERMISSION_DENIED here, having no election id.
    await expect(client.unaryRaw("Write", Buffer.from([0x22, 0xff, 0xff, 0xff, 0x0f, 0x01]))).rejects.toMatchObject({
      code: 13,
    });
    await expect(client.unaryRaw("Write", Buffer.from([0x0a]))).rejects.toMatchObject({ code: 13 });
    await expect(client.unaryRaw("Write", Buffer.from([0x08, 0x02]))).rejects.toMatchObject({
      code: PERMISSION_DENIED,
    });
    expect((await routes()).sort()).toEqual(["10.2.0.0/16"]);
  });
});

describe("a controller session on the IP router", () => {
  test(
    "installs the exported entries on empty devices, then a packet-out " + "crosses the router like a replay's packet",
    async () => {
      const s = await serve(true);
      const client = new Client(s.address);
      try {
        const streams = new Map<string, Stream>();
        for (const ex of exports) streams.set(ex.manifest.machine, await primary(client, ex.manifest.deviceId, 1));
        const h1 = machine("h1").manifest;
        const h2 = machine("h2").manifest;
        const frame = pcapPackets("pcaps/example-router-h1.pcap")[0];
        if (frame === undefined) throw new Error("no packet");
        const ipPacket = frame.subarray(14); // h1's own IPv4 packet, as ip.h1 sends it
        const ipH1 = h1.members.find((m) => m.member === "ip.h1")?.number ?? 0;
        const packetOut = (): void =>
          streams.get("h1")?.send({
            packet: {
              payload: ipPacket,
              metadata: [
                { metadataId: 1, value: Buffer.from([ipH1]) },
                { metadataId: 2, value: Buffer.from([1]) },
                { metadataId: 3, value: Buffer.from([0]) },
              ],
            },
          });
        // Empty devices: the packet goes nowhere.
        packetOut();
        expect(await streams.get("h2")?.drain(300)).toEqual([]);
        // The controller commits each pipeline and writes the export's WriteRequest as it is (entries.bin, election id
        // 1).
        for (const ex of exports) {
          const got = (await client.unary("getForwardingPipelineConfig", { deviceId: String(ex.manifest.deviceId) }))
            .config as M;
          await client.unary("setForwardingPipelineConfig", {
            deviceId: String(ex.manifest.deviceId),
            electionId: election(1),
            action: "VERIFY_AND_COMMIT",
            config: { p4info: got.p4info },
          });
          await client.unaryRaw("Write", ex.files["entries.bin"] as Uint8Array);
        }
        packetOut();
        const m = await streams.get("h2")?.next();
        const packet = m?.packet as M;
        const meta = Object.fromEntries(
          ((packet.metadata ?? []) as M[]).map((x) => [Number(x.metadataId), [...(x.value as Buffer)]]),
        );
        expect(meta[1]).toEqual([h2.members.find((x) => x.member === "ip.h2")?.number]);
        expect(meta[2]).toEqual([1]);
        // The same packet a replay of the example delivers to ip.h2 (TTL lowered by r).
        const out = mkdtempSync(join(tmpdir(), "strata-p4rt-"));
        replay({ spec: SPEC, inputs: [{ endpoint: "lanA:h1.1", file: "pcaps/example-router-h1.pcap" }], out });
        const delivered = pcapPackets(join(out, "delivered", "ip.h2.pcap"));
        expect(delivered.length).toBe(1);
        expect(Buffer.from(packet.payload as Buffer).equals(delivered[0] ?? Buffer.alloc(0))).toBe(true);
        // The links carried it as in the replay.
        const counts = await s.emulation.counters();
        const compiled = s.emulation.compiled;
        const byName = Object.fromEntries(
          compiled.links
            .filter((l) => (counts.links[l.index] ?? 0) > 0)
            .map((l) => [`${l.qualified}:${compiled.members[l.sender]?.qualified ?? ""}`, counts.links[l.index]]),
        );
        expect(byName).toEqual({
          "lanA.h1.1-r.1:lanA.h1": 1,
          "lanB.r.1-h2.1:lanB.r": 1,
          "ip.h1.1-r.1:ip.h1": 1,
          "ip.r.2-h2.1:ip.r": 1,
        });
        // Read: r's forward entries count the packet on the route it took (their direct counters).
        const rId = machine("r").manifest.deviceId;
        const hits = async (entity: M): Promise<Record<string, string>> =>
          Object.fromEntries(
            (await client.read({ deviceId: String(rId), entities: [entity] })).map((e) => {
              const te = (e.tableEntry ?? (e.directCounterEntry as M).tableEntry) as M;
              const data = (e.tableEntry !== undefined ? te.counterData : (e.directCounterEntry as M).data) as M;
              const lpm = ((te.match as M[])[0]?.lpm ?? {}) as M;
              return [
                `${[...(lpm.value as Buffer)].join(".")}/${String(lpm.prefixLen)}`,
                String(data.packetCount ?? "0"),
              ];
            }),
          );
        expect(await hits({ tableEntry: { tableId: FORWARD, counterData: {} } })).toEqual({
          "10.0.1.0/24": "0",
          "10.0.2.0/24": "1",
        });
        expect(await hits({ directCounterEntry: { tableEntry: { tableId: FORWARD } } })).toEqual({
          "10.0.1.0/24": "0",
          "10.0.2.0/24": "1",
        });
        // A backup's packet-out is refused on its stream; a bad member number too.
        const backup = client.stream();
        backup.arbitrate(h1.deviceId, 0);
        expect(statusCode(await backup.next())).toBe(ALREADY_EXISTS);
        backup.send({ packet: { payload: ipPacket, metadata: [] } });
        expect(((await backup.next()).error as M).canonicalCode).toBe(PERMISSION_DENIED);
        streams.get("h1")?.send({
          packet: {
            payload: ipPacket,
            metadata: [
              { metadataId: 1, value: Buffer.from([99]) },
              { metadataId: 2, value: Buffer.from([1]) },
              { metadataId: 3, value: Buffer.from([0]) },
            ],
          },
        });
        expect(((await streams.get("h1")?.next())?.error as M).canonicalCode).toBe(INVALID_ARGUMENT);
        expect(s.server.stats.packetIns).toBe(1);
        backup.close();
        for (const st of streams.values()) st.close();
      } finally {
        client.close();
        await s.server.close();
      }
    },
  );
});

describe("every example's entries, written by a controller, read back as written", () => {
  const specs = [...REPLAY_EXAMPLES.map((d) => `examples/${d}/network.yaml`), "test/fixtures/specs/p4-features.yaml"];
  const Entity = ROOT.lookupType("p4.v1.Entity");
  const ReadRequest = ROOT.lookupType("p4.v1.ReadRequest");
  const ReadResponse = ROOT.lookupType("p4.v1.ReadResponse");
  /** An entity's canonical bytes. */
  const key = (e: protobuf.Message): string => Buffer.from(Entity.encode(e).finish()).toString("hex");
  test.each(specs)("%s", async (spec) => {
    const emulation = EngineEmulation.local(compile(loadSpec(spec)));
    const server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", empty: true });
    const client = new Client(`127.0.0.1:${server.port}`);
    try {
      for (const ex of exportP4(compile(loadSpec(spec)), spec)) {
        const id = ex.manifest.deviceId;
        const stream = await primary(client, id, 1);
        await client.unaryRaw("Write", ex.files["entries.bin"] as Uint8Array);
        // §9.1.6: the ordinary entries of every table, then (is_default_action) every table's default entry.
        const wildcard = [
          { tableEntry: {} },
          { tableEntry: { isDefaultAction: true } },
          { packetReplicationEngineEntry: { multicastGroupEntry: {} } },
          { packetReplicationEngineEntry: { cloneSessionEntry: {} } },
          { actionProfileMember: {} },
          { actionProfileGroup: {} },
        ];
        const raw = await new Promise<Buffer[]>((resolve, reject) => {
          const got: Buffer[] = [];
          const call = client.raw.makeServerStreamRequest(
            "/p4.v1.P4Runtime/Read",
            (b: Uint8Array) => Buffer.from(b),
            (b: Buffer) => b,
            ReadRequest.encode(ReadRequest.fromObject({ deviceId: id, entities: wildcard })).finish(),
          );
          call.on("data", (b: Buffer) => got.push(b));
          call.on("error", reject);
          call.on("end", () => resolve(got));
        });
        const read = raw
          .flatMap((b) => (ReadResponse.decode(b) as unknown as { entities: protobuf.Message[] }).entities)
          .map(key)
          .sort();
        const updates = (JSON.parse(String(ex.files["entries.json"])) as M).updates as M[];
        // §9.1.3: every table has its default entry; those the export did not set are the program's (the table's
        // @defaultonly miss).
        const set = new Set(
          updates.flatMap((u) =>
            ((u.entity as M).tableEntry as M | undefined)?.isDefaultAction === true
              ? [((u.entity as M).tableEntry as M).tableId]
              : [],
          ),
        );
        const programs = ((JSON.parse(String(ex.files["p4info.json"])) as M).tables as M[])
          .filter((t) => !set.has((t.preamble as M).id))
          .map((t) => ({
            tableEntry: {
              tableId: (t.preamble as M).id,
              action: { action: { actionId: ((t.actionRefs as M[]).find((r) => r.scope === "DEFAULT_ONLY") as M).id } },
              isDefaultAction: true,
            },
          }));
        const written = [...updates.map((u) => u.entity as M), ...programs]
          .map((e) => key(protojson.fromJson(Entity, e)))
          .sort();
        expect(read).toEqual(written);
        stream.close();
      }
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe("action profiles (an anycast selector)", () => {
  test("in-use members and groups, duplicates and absent members are refused per update", async () => {
    const spec = "test/fixtures/specs/p4-features.yaml";
    const all = exportP4(compile(loadSpec(spec)), spec);
    const updatesOf = (ex: MachineExport): M[] => (JSON.parse(String(ex.files["entries.json"])) as M).updates as M[];
    const ex = all.find((e) => updatesOf(e).some((u) => (u.entity as M).actionProfileGroup !== undefined));
    if (ex === undefined) throw new Error("p4-features has no action selector");
    const Entity = ROOT.lookupType("p4.v1.Entity");
    // The export's entities as the client sends them (bytes as base64, which the client's encoder takes).
    const entityOf = (u: M): M =>
      Entity.toObject(protojson.fromJson(Entity, u.entity), { longs: String, enums: String, bytes: String }) as M;
    const member = updatesOf(ex).find((u) => (u.entity as M).actionProfileMember !== undefined) as M;
    const group = updatesOf(ex).find((u) => (u.entity as M).actionProfileGroup !== undefined) as M;
    const emulation = EngineEmulation.local(compile(loadSpec(spec)));
    const server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", empty: false });
    const client = new Client(`127.0.0.1:${server.port}`);
    const stream = await primary(client, ex.manifest.deviceId, 1);
    const codes = async (updates: M[]): Promise<number[]> => {
      try {
        await client.unary("write", { deviceId: String(ex.manifest.deviceId), electionId: election(1), updates });
        return updates.map(() => OK);
      } catch (e) {
        return (e as { errors: { canonicalCode: number }[] }).errors.map((x) => x.canonicalCode);
      }
    };
    try {
      const m = entityOf(member);
      const g = entityOf(group);
      const ghost = {
        actionProfileGroup: { ...(g.actionProfileGroup as M), groupId: 999, members: [{ memberId: 999, weight: 1 }] },
      };
      expect(
        await codes([
          { type: "INSERT", entity: m },
          { type: "DELETE", entity: m },
          { type: "INSERT", entity: ghost },
          { type: "DELETE", entity: g },
        ]),
      ).toEqual([ALREADY_EXISTS, FAILED_PRECONDITION, NOT_FOUND, FAILED_PRECONDITION]);
    } finally {
      stream.close();
      client.close();
      await server.close();
    }
  });
});

describe("a primary that does not read its stream", () => {
  test(
    "holds a bounded number of packet-ins, drops and counts the rest, and " +
      "delivers the ones it held once the controller reads",
    async () => {
      const s = await serve(false);
      const client = new Client(s.address);
      const h2 = machine("h2").manifest;
      // h2's primary: a raw stream that reads its arbitration answer and then nothing.
      const call = client.raw.makeBidiStreamRequest(
        "/p4.v1.P4Runtime/StreamChannel",
        (m: M) =>
          Buffer.from(
            ROOT.lookupType("p4.v1.StreamMessageRequest")
              .encode(ROOT.lookupType("p4.v1.StreamMessageRequest").fromObject(m))
              .finish(),
          ),
        (b: Buffer) =>
          ROOT.lookupType("p4.v1.StreamMessageResponse").toObject(
            ROOT.lookupType("p4.v1.StreamMessageResponse").decode(b),
          ) as M,
      );
      const received: M[] = [];
      call.on("data", (m: M) => received.push(m));
      call.write({ arbitration: { deviceId: h2.deviceId, electionId: { high: 0, low: 1 } } });
      try {
        await until(
          () => received.length === 1,
          () => "never primary",
        );
        call.pause();
        // ip.h1 sends h1's IPv4 packet to h2, over and over: each is a packet-in on h2's stream.
        const frame = pcapPackets("pcaps/example-router-h1.pcap")[0] ?? Buffer.alloc(0);
        const ipH1 = s.emulation.compiled.members.find((m) => m.qualified === "ip.h1")?.index ?? -1;
        const packets = Array.from({ length: 500 }, () => ({
          at: { kind: "self" as const, member: ipH1, session: 0, link: -1 },
          data: frame.subarray(14),
        }));
        const ROUNDS = 20,
          SENT = ROUNDS * packets.length;
        const GRPC_BUFFER = 16; // the server stream's own highWaterMark (object mode)
        let most = 0;
        for (let round = 0; round < ROUNDS; round++) {
          await s.emulation.inject(packets);
          await new Promise((r) => setImmediate(r));
          most = Math.max(most, s.server.queuedPacketIns);
        }
        const { packetIns, packetInsStreamFull, packetInsDropped } = s.server.stats;
        expect(packetIns + packetInsStreamFull + packetInsDropped).toBe(SENT);
        expect(packetInsDropped).toBe(0);
        expect(most).toBeGreaterThanOrEqual(PACKET_IN_QUEUE);
        expect(most).toBeLessThanOrEqual(PACKET_IN_QUEUE + GRPC_BUFFER);
        // Besides what the server holds, the client's HTTP/2 window (64 KiB) took a few.
        expect(packetIns - s.server.queuedPacketIns).toBeLessThan(1000);
        expect(packetInsStreamFull).toBeGreaterThan(SENT - PACKET_IN_QUEUE - GRPC_BUFFER - 1000);
        // The controller reads again: every packet-in the server took arrives, the held ones after the others.
        call.resume();
        await until(
          () => received.length === 1 + packetIns,
          () => `never ${packetIns} packet-ins (got ${received.length - 1})`,
        );
        expect(received.slice(1).every((m) => m.packet !== undefined)).toBe(true);
        expect(s.server.queuedPacketIns).toBe(0);
      } finally {
        call.end();
        client.close();
        await s.server.close();
      }
    },
  );
});
