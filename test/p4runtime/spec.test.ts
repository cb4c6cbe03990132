// strata's P4Runtime server held to the P4Runtime 1.4 specification
// (p4lang/p4runtime docs/v1/P4Runtime-Spec.mdk): each test names the section
// it checks. Real gRPC on localhost, the client built from the official
// definitions only (./client.ts), the IP router example's devices.

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { routesSpec } from "../../bench/p4runtime.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { exportP4 } from "../../src/p4/export.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { Client, type M, ROOT, type RpcError, statusCode, type Stream } from "./client.js";
import {
  ALREADY_EXISTS,
  actionId,
  election,
  FAILED_PRECONDITION,
  FORWARD,
  INVALID_ARGUMENT,
  machine,
  NOT_FOUND,
  OK,
  PERMISSION_DENIED,
  primary,
  R,
  route,
  serve,
  tableId,
  UNKNOWN,
} from "./ip-router.js";

/** The code an RPC fails with (OK when it does not). */
async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return OK;
  } catch (e) {
    return (e as RpcError).code;
  }
}

/** Each update's code in a Write (all OK, or the p4.v1.Error of each). */
async function codes(client: Client, updates: M[], extra: M = {}): Promise<number[]> {
  try {
    await client.unary("write", { deviceId: String(R), electionId: election(1), updates, ...extra });
    return updates.map(() => OK);
  } catch (e) {
    const err = e as RpcError;
    if (err.code !== UNKNOWN) return [err.code];
    return err.errors.map((x) => x.canonicalCode);
  }
}

const ACQUIRE = tableId("ip_r_acquire"); // dst: OPTIONAL, so entries have priorities
const RECEIVE = tableId("ip_r_receive"); // keyless: its default entry is its row
const TRANSMIT = tableId("ip_r_transmit");
const RECEIVE_DELIVER = actionId("receive_deliver");

/** An ip.r acquire entry: dst (optional) at a priority → an acquire action. */
const acquire = (dst: number[], priority: number, action: string, extra: M = {}): M => ({
  tableEntry: {
    tableId: ACQUIRE,
    match: [{ fieldId: 1, optional: { value: Buffer.from(dst) } }],
    priority,
    action: { action: { actionId: actionId(action) } },
    ...extra,
  },
});
const te = (e: M): M => e.tableEntry as M;
/** h1's own IPv4 packet to h2 (10.0.1.1 → 10.0.2.2), as ip.h1 sends it. */
const PACKET = Buffer.from(`45000054000040004001244f0a0001010a000202${"00".repeat(64)}`, "hex");
/** What identifies an entry read back: "dst/priority" (LPM: "a.b.c.d/len"). */
const label = (e: M): string => {
  const m = ((te(e).match ?? []) as M[])[0] ?? {};
  const f = (m.optional ?? m.lpm ?? {}) as M;
  return (
    `${[...((f.value as Buffer | undefined) ?? [])].join(".")}/` +
    `${String(m.lpm !== undefined ? f.prefixLen : (te(e).priority ?? 0))}`
  );
};

describe("§5.3 arbitration updates", () => {
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

  test.each([
    { from: undefined, to: "ops" },
    { from: "ops", to: undefined },
    { from: "ops", to: "other" },
  ])(
    "§5.3 (2.2): a live stream's update for another role ($from → $to) ends it with FAILED_PRECONDITION",
    async ({ from, to }) => {
      const stream = await primary(client, R, 7, from);
      stream.arbitrate(R, 7, to);
      expect(((await stream.next()).streamError as M | undefined)?.code).toBe(FAILED_PRECONDITION);
    },
  );

  test("§5.3 (1.3): a role.config the server does not know is INVALID_ARGUMENT", async () => {
    const stream = client.stream();
    stream.send({
      arbitration: {
        deviceId: String(R),
        electionId: election(1),
        role: { name: "acme", config: { type_url: "type.googleapis.com/acme.RoleConfig", value: Buffer.from([8, 1]) } },
      },
    });
    expect(((await stream.next()).streamError as M | undefined)?.code).toBe(INVALID_ARGUMENT);
  });

  test(
    "§5.3: when the primary sends its own election id again, every " + "controller of the role is told again",
    async () => {
      const a = await primary(client, R, 5, "again");
      const b = client.stream();
      b.arbitrate(R, 3, "again");
      expect(statusCode(await b.next())).toBe(ALREADY_EXISTS);
      a.arbitrate(R, 5, "again");
      expect(statusCode(await a.next())).toBe(OK);
      const told = await b.next();
      expect(statusCode(told)).toBe(ALREADY_EXISTS);
      expect((told.arbitration as M).electionId).toEqual(election(5));
      a.close();
      b.close();
    },
  );

  test(
    "§12: a Write for a role the device does not have is NOT_FOUND; its " +
      "primary's Write for a role it has goes through",
    async () => {
      expect(await codes(client, [], { role: "nobody" })).toEqual([NOT_FOUND]);
      const stream = await primary(client, R, 1, "writers");
      expect(
        await codes(client, [{ type: "INSERT", entity: route([10, 7, 0, 0], 16, 1) }], { role: "writers" }),
      ).toEqual([OK]);
      expect(await codes(client, [], { role: "writers", electionId: election(2) })).toEqual([PERMISSION_DENIED]);
      stream.close();
    },
  );
});

describe("§9.1 table entries", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let client: Client;
  let stream: Stream;
  const read = (entity: M): Promise<M[]> => client.read({ deviceId: String(R), entities: [entity] });
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

  test(
    "§9.1, §8.2: an entry's metadata and controller_metadata are kept and " +
      "read back; a MODIFY with an action replaces them",
    async () => {
      const cookies = { metadata: Buffer.from("route for tenant 7"), controllerMetadata: "18446744073709551615" };
      expect(await codes(client, [{ type: "INSERT", entity: route([10, 1, 0, 0], 16, 1, cookies) }])).toEqual([OK]);
      const [got] = await read({ tableEntry: { tableId: FORWARD, match: te(route([10, 1, 0, 0], 16, 1)).match } });
      expect(Buffer.from(te(got ?? {}).metadata as Buffer).toString()).toBe("route for tenant 7");
      expect(te(got ?? {}).controllerMetadata).toBe("18446744073709551615");
      expect(
        await codes(client, [
          { type: "MODIFY", entity: route([10, 1, 0, 0], 16, 2, { metadata: Buffer.from("moved") }) },
        ]),
      ).toEqual([OK]);
      const [moved] = await read({ tableEntry: { tableId: FORWARD, match: te(route([10, 1, 0, 0], 16, 1)).match } });
      expect(Buffer.from(te(moved ?? {}).metadata as Buffer).toString()).toBe("moved");
      expect(te(moved ?? {}).controllerMetadata).toBeUndefined();
      expect(await codes(client, [{ type: "DELETE", entity: route([10, 1, 0, 0], 16, 1) }])).toEqual([OK]);
    },
  );

  test("§9.1.2: a MODIFY without an action changes nothing and succeeds", async () => {
    expect(
      await codes(client, [{ type: "INSERT", entity: route([10, 2, 0, 0], 16, 2, { metadata: Buffer.from("kept") }) }]),
    ).toEqual([OK]);
    expect(
      await codes(client, [
        { type: "MODIFY", entity: { tableEntry: { tableId: FORWARD, match: te(route([10, 2, 0, 0], 16, 2)).match } } },
      ]),
    ).toEqual([OK]);
    const [got] = await read({ tableEntry: { tableId: FORWARD, match: te(route([10, 2, 0, 0], 16, 2)).match } });
    expect((te(got ?? {}).action as M).action).toEqual((te(route([10, 2, 0, 0], 16, 2)).action as M).action);
    expect(Buffer.from(te(got ?? {}).metadata as Buffer).toString()).toBe("kept");
    expect(await codes(client, [{ type: "DELETE", entity: route([10, 2, 0, 0], 16, 2) }])).toEqual([OK]);
  });

  test.each([
    {
      name: "§9.1.2: an @defaultonly action in a match entry is PERMISSION_DENIED",
      entity: route([10, 3, 0, 0], 16, 1, { action: { action: { actionId: actionId("forward_miss") } } }),
      code: PERMISSION_DENIED,
    },
    {
      name: "§9.1: is_const on a write is INVALID_ARGUMENT",
      entity: route([10, 3, 0, 0], 16, 1, { isConst: true }),
      code: INVALID_ARGUMENT,
    },
    {
      name: "§9.1.8: an idle timeout on a table without one is INVALID_ARGUMENT",
      entity: route([10, 3, 0, 0], 16, 1, { idleTimeoutNs: "1000" }),
      code: INVALID_ARGUMENT,
    },
    {
      name: "§9.1.3: a default entry with a priority is INVALID_ARGUMENT",
      entity: {
        tableEntry: {
          tableId: RECEIVE,
          isDefaultAction: true,
          priority: 3,
          action: { action: { actionId: RECEIVE_DELIVER } },
        },
      },
      code: INVALID_ARGUMENT,
      type: "MODIFY",
    },
    {
      name: "§9.1.3: a default entry with a match is INVALID_ARGUMENT",
      entity: { tableEntry: { ...te(route([10, 3, 0, 0], 16, 1)), isDefaultAction: true } },
      code: INVALID_ARGUMENT,
      type: "MODIFY",
    },
    {
      name: "§9.1.3: a default entry is not INSERTed",
      entity: {
        tableEntry: { tableId: RECEIVE, isDefaultAction: true, action: { action: { actionId: RECEIVE_DELIVER } } },
      },
      code: INVALID_ARGUMENT,
    },
    {
      name: "§9.1.3: a constant default entry is PERMISSION_DENIED",
      entity: {
        tableEntry: {
          tableId: FORWARD,
          isDefaultAction: true,
          action: { action: { actionId: actionId("forward_drop") } },
        },
      },
      code: PERMISSION_DENIED,
      type: "MODIFY",
    },
  ])("$name", async ({ entity, code, type }) => {
    expect(await codes(client, [{ type: type ?? "INSERT", entity }])).toEqual([code]);
  });

  describe("§9.1.6 reads filter", () => {
    const entries = [
      acquire([10, 0, 0, 1], 10, "acquire_receive", { metadata: Buffer.from("x") }),
      acquire([10, 0, 0, 2], 20, "acquire_forward", { controllerMetadata: "7" }),
      acquire([10, 0, 0, 1], 30, "acquire_forward"),
    ];
    beforeAll(async () => {
      expect(
        await codes(
          client,
          entries.map((entity) => ({ type: "INSERT", entity })),
        ),
      ).toEqual([OK, OK, OK]);
    });
    afterAll(async () => {
      await codes(
        client,
        entries.map((entity) => ({ type: "DELETE", entity })),
      );
    });
    const one = te(acquire([10, 0, 0, 1], 10, "acquire_forward")).match;
    test.each([
      { by: "nothing: the whole table", query: {}, read: ["10.0.0.1/10", "10.0.0.2/20", "10.0.0.1/30"] },
      { by: "priority", query: { priority: 20 }, read: ["10.0.0.2/20"] },
      { by: "action", query: { action: { action: { actionId: actionId("acquire_receive") } } }, read: ["10.0.0.1/10"] },
      { by: "metadata", query: { metadata: Buffer.from("x") }, read: ["10.0.0.1/10"] },
      { by: "controller_metadata", query: { controllerMetadata: "7" }, read: ["10.0.0.2/20"] },
      { by: "match and priority: the one entry", query: { match: one, priority: 30 }, read: ["10.0.0.1/30"] },
      {
        by: "match with no priority: that match at every priority",
        query: { match: one },
        read: ["10.0.0.1/10", "10.0.0.1/30"],
      },
      { by: "match and a priority it is not at: nothing", query: { match: one, priority: 20 }, read: [] },
      {
        by: "match, priority and another action: nothing",
        query: { match: one, priority: 30, action: { action: { actionId: actionId("acquire_receive") } } },
        read: [],
      },
    ])("§9.1.6: by $by", async ({ query, read: want }) => {
      expect((await read({ tableEntry: { tableId: ACQUIRE, ...query } })).map(label)).toEqual(want);
    });

    test("§9.1.6: a read of every table (table_id 0) takes no other filter: INVALID_ARGUMENT", async () => {
      expect(await codeOf(read({ tableEntry: { priority: 20 } }))).toBe(INVALID_ARGUMENT);
    });
  });

  describe("§9.1.3 default entries", () => {
    const defaultOf = async (table: number): Promise<M[]> =>
      read({ tableEntry: { tableId: table, isDefaultAction: true } });
    const actionOf = (e: M | undefined): unknown =>
      ((te(e ?? {}).action as M | undefined)?.action as M | undefined)?.actionId;

    test(
      "§9.1.3, §9.1.6: every table has its default entry, a constant one too, " + "read with is_default_action",
      async () => {
        expect((await defaultOf(FORWARD)).map(actionOf)).toEqual([actionId("forward_miss")]);
        expect((await defaultOf(RECEIVE)).map(actionOf)).toEqual([actionId("receive_miss")]);
        const all = await read({ tableEntry: { isDefaultAction: true } });
        expect(all.map((e) => te(e).tableId).sort()).toEqual(
          ((JSON.parse(String(machine("r").files["p4info.json"])) as M).tables as M[])
            .map((t) => (t.preamble as M).id)
            .sort(),
        );
        expect(all.every((e) => te(e).isDefaultAction === true)).toBe(true);
      },
    );

    test(
      "§9.1.3: a default entry MODIFYed reads back; a MODIFY without an " +
        "action resets it to the program's, cookies and all",
      async () => {
        const deliver = {
          tableEntry: {
            tableId: RECEIVE,
            isDefaultAction: true,
            action: { action: { actionId: RECEIVE_DELIVER } },
            metadata: Buffer.from("d"),
          },
        };
        expect(await codes(client, [{ type: "MODIFY", entity: deliver }])).toEqual([OK]);
        const [set] = await defaultOf(RECEIVE);
        expect(actionOf(set)).toBe(RECEIVE_DELIVER);
        expect(Buffer.from(te(set ?? {}).metadata as Buffer).toString()).toBe("d");
        // §9.1.6: ordinary reads, of the table or of every table, hold no default entry.
        expect(await read({ tableEntry: { tableId: RECEIVE } })).toEqual([]);
        expect((await read({ tableEntry: {} })).filter((e) => te(e).isDefaultAction === true)).toEqual([]);
        expect(
          await codes(client, [
            { type: "MODIFY", entity: { tableEntry: { tableId: RECEIVE, isDefaultAction: true } } },
          ]),
        ).toEqual([OK]);
        const [reset] = await defaultOf(RECEIVE);
        expect(actionOf(reset)).toBe(actionId("receive_miss"));
        expect(te(reset ?? {}).metadata).toBeUndefined();
      },
    );
  });

  describe("§9.1.7, §9.3.1 direct counters", () => {
    const A = route([10, 9, 0, 0], 16, 1);
    const counterOf = async (entity: M): Promise<unknown> => {
      const [got] = await read(entity);
      const data = (
        got?.tableEntry !== undefined ? te(got).counterData : (got?.directCounterEntry as M | undefined)?.data
      ) as M | undefined;
      return data?.packetCount ?? (data === undefined ? undefined : "0");
    };
    const key = { tableId: FORWARD, match: te(A).match };

    test(
      "§9.1.7: an INSERT's counter_data is the counter's starting value; " + "counter_data is read only when asked for",
      async () => {
        expect(
          await codes(client, [
            { type: "INSERT", entity: { tableEntry: { ...te(A), counterData: { packetCount: "42" } } } },
          ]),
        ).toEqual([OK]);
        expect(await counterOf({ tableEntry: key })).toBeUndefined();
        expect(await counterOf({ tableEntry: { ...key, counterData: {} } })).toBe("42");
      },
    );

    test("§9.1.7: a MODIFY with counter_data sets the counter; one without leaves it", async () => {
      expect(
        await codes(client, [
          { type: "MODIFY", entity: { tableEntry: { ...te(A), counterData: { packetCount: "5" } } } },
        ]),
      ).toEqual([OK]);
      expect(await counterOf({ tableEntry: { ...key, counterData: {} } })).toBe("5");
      expect(await codes(client, [{ type: "MODIFY", entity: route([10, 9, 0, 0], 16, 2) }])).toEqual([OK]);
      expect(await counterOf({ tableEntry: { ...key, counterData: {} } })).toBe("5");
    });

    test("§9.3.1: a DirectCounterEntry MODIFY sets the counter, and reads back", async () => {
      expect(
        await codes(client, [
          { type: "MODIFY", entity: { directCounterEntry: { tableEntry: key, data: { packetCount: "1000" } } } },
        ]),
      ).toEqual([OK]);
      expect(await counterOf({ directCounterEntry: { tableEntry: key } })).toBe("1000");
    });

    test.each(["INSERT", "DELETE"])("§9.3.1: a DirectCounterEntry %s is INVALID_ARGUMENT", async (type) => {
      expect(
        await codes(client, [
          { type, entity: { directCounterEntry: { tableEntry: key, data: { packetCount: "1" } } } },
        ]),
      ).toEqual([INVALID_ARGUMENT]);
    });

    test("§9.3.1: the counter of an entry that is not there is NOT_FOUND, to write or to read", async () => {
      const absent = { tableId: FORWARD, match: te(route([10, 8, 0, 0], 16, 1)).match };
      expect(
        await codes(client, [
          { type: "MODIFY", entity: { directCounterEntry: { tableEntry: absent, data: { packetCount: "1" } } } },
        ]),
      ).toEqual([NOT_FOUND]);
      expect(await codeOf(read({ directCounterEntry: { tableEntry: absent } }))).toBe(NOT_FOUND);
    });
  });

  test("§13.2: an empty Entity in a Read is INVALID_ARGUMENT", async () => {
    expect(await codeOf(read({}))).toBe(INVALID_ARGUMENT);
  });
});

describe("message sizes", () => {
  test(
    "a Write of more than 4 MiB is taken (up to 256 MiB, as p4lang/PI's " +
      "server); §13.3: a Read's answer past 4 MiB comes in responses a client " +
      "takes by default",
    async () => {
      const s = await serve(true);
      const client = new Client(s.address);
      const stream = await primary(client, R, 1);
      try {
        const big = (i: number): M => route([10, i, 0, 0], 16, 1, { metadata: Buffer.alloc(2 * 1024 * 1024, i) });
        expect(
          await codes(
            client,
            [1, 2, 3].map((i) => ({ type: "INSERT", entity: big(i) })),
          ),
        ).toEqual([OK, OK, OK]);
        // The responses as they come, in bytes.
        const ReadRequest = ROOT.lookupType("p4.v1.ReadRequest");
        const responses: number[] = [];
        const got = await new Promise<number>((resolve, reject) => {
          const c = client.raw.makeServerStreamRequest(
            "/p4.v1.P4Runtime/Read",
            (b: Uint8Array) => Buffer.from(b),
            (b: Buffer) => b,
            ReadRequest.encode(
              ReadRequest.fromObject({ deviceId: R, entities: [{ tableEntry: { tableId: FORWARD } }] }),
            ).finish(),
          );
          c.on("data", (b: Buffer) => responses.push(b.length));
          c.on("error", reject);
          c.on("end", () => resolve(responses.length));
        });
        expect(got).toBeGreaterThanOrEqual(2);
        expect(Math.max(...responses)).toBeLessThanOrEqual(4 * 1024 * 1024);
        expect(
          (await client.read({ deviceId: String(R), entities: [{ tableEntry: { tableId: FORWARD } }] })).map(label),
        ).toEqual(["10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16"]);
      } finally {
        stream.close();
        client.close();
        await s.server.close();
      }
    },
  );
});

/** The sizes of the maps walked (iterated, or forEach) in this process while `run` runs. */
async function walkedDuring(run: () => Promise<void>): Promise<number[]> {
  const sizes: number[] = [];
  const proto = Map.prototype as unknown as Record<
    string | symbol,
    (this: Map<unknown, unknown>, ...a: unknown[]) => unknown
  >;
  const names = [Symbol.iterator, "entries", "values", "keys", "forEach"] as const;
  const originals = names.map((name) => proto[name]);
  names.forEach((name, k) => {
    const original = originals[k];
    proto[name] = function (this: Map<unknown, unknown>, ...a: unknown[]): unknown {
      sizes.push(this.size);
      return original?.apply(this, a);
    };
  });
  try {
    await run();
  } finally {
    names.forEach((name, k) => (proto[name] = originals[k] as (typeof proto)[string]));
  }
  return sizes;
}

describe("§9.1.6 a read of one entry by its key", () => {
  test("among 10,000 entries finds it by its key, not by a scan of the table", async () => {
    const source = "routes.yaml";
    const compiled = compile(parseSpec(routesSpec(), source));
    const ex = exportP4(compiled, source).find((e) => e.manifest.machine === "r");
    const info = JSON.parse(String(ex?.files["p4info.json"])) as M;
    const forward = Number(
      (((info.tables as M[]).find((t) => (t.preamble as M).alias === "ip_r_forward") ?? {}).preamble as M).id,
    );
    const server = await P4RuntimeServer.start(EngineEmulation.local(compiled), {
      address: "127.0.0.1:0",
      empty: true,
    });
    const client = new Client(`127.0.0.1:${server.port}`);
    const deviceId = ex?.manifest.deviceId ?? 0;
    const stream = await primary(client, deviceId, 1);
    try {
      const entry = (i: number): M => ({ ...te(route([10, i >> 8, i & 0xff, 0], 24, 2)), tableId: forward });
      for (let b = 0; b < 10; b++) {
        await client.unary("write", {
          deviceId: String(deviceId),
          electionId: election(1),
          updates: Array.from({ length: 1000 }, (_, i) => ({
            type: "INSERT",
            entity: { tableEntry: entry(b * 1000 + i) },
          })),
        });
      }
      // Counted, not timed (a busy machine makes any read slow): a read by key walks no map as large as the table,
      // where a read of the whole table does (a scan of 10,000 entries took 70–84 ms, a lookup well under 1 ms).
      const byKey = await walkedDuring(async () => {
        for (let i = 0; i < 21; i++) {
          const got = await client.read({
            deviceId: String(deviceId),
            entities: [{ tableEntry: { tableId: forward, match: entry(i * 479).match } }],
          });
          expect(got.map(label)).toEqual([`10.${(i * 479) >> 8}.${(i * 479) & 0xff}.0/24`]);
        }
      });
      expect(byKey.filter((size) => size >= 10_000)).toEqual([]);
      const whole = await walkedDuring(async () => {
        expect(
          await client.read({ deviceId: String(deviceId), entities: [{ tableEntry: { tableId: forward } }] }),
        ).toHaveLength(10_000);
      });
      expect(whole.filter((size) => size >= 10_000).length).toBeGreaterThan(0);
    } finally {
      stream.close();
      client.close();
      await server.close();
    }
  });
});

describe("§16.1 packet-out metadata", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let client: Client;
  let h1: Stream;
  let h2: Stream;
  const ipH1 = machine("h1").manifest.members.find((m) => m.member === "ip.h1")?.number ?? 0;
  const payload = PACKET;
  const meta = (id: number, value: number[]): M => ({ metadataId: id, value: Buffer.from(value) });
  beforeAll(async () => {
    s = await serve(false);
    client = new Client(s.address);
    h1 = await primary(client, machine("h1").manifest.deviceId, 1);
    h2 = await primary(client, machine("h2").manifest.deviceId, 1);
  });
  afterAll(async () => {
    h1.close();
    h2.close();
    client.close();
    await s.server.close();
  });

  test("a packet-out with every field of packet_out once crosses to h2", async () => {
    h1.send({ packet: { payload, metadata: [meta(1, [ipH1]), meta(2, [1]), meta(3, [0])] } });
    expect((await h2.next()).packet).toBeDefined();
  });

  test.each([
    { name: "an unknown metadata id", metadata: [meta(1, [ipH1]), meta(2, [1]), meta(3, [0]), meta(9, [1])] },
    { name: "a missing field (session)", metadata: [meta(1, [ipH1]), meta(2, [1])] },
    { name: "a field given twice (member)", metadata: [meta(1, [ipH1]), meta(1, [ipH1]), meta(2, [1]), meta(3, [0])] },
    { name: "a value wider than its field (kind, 8 bits)", metadata: [meta(1, [ipH1]), meta(2, [1, 1]), meta(3, [0])] },
  ])("§16.1: a packet-out with $name is dropped, and the controller told with a StreamError", async ({ metadata }) => {
    const before = s.server.stats.packetOuts;
    h1.send({ packet: { payload, metadata } });
    const error = (await h1.next()).error as M | undefined;
    expect(error?.canonicalCode).toBe(INVALID_ARGUMENT);
    expect(((error?.packetOut as M | undefined)?.packetOut as M | undefined)?.payload).toEqual(payload);
    expect(s.server.stats.packetOuts).toBe(before);
    expect(await h2.drain(200)).toEqual([]);
  });
});

describe("action parameters naming a member the device lacks (docs/p4-export.md)", () => {
  test(
    "a member number that fits its parameter is taken and reads back; what " + "the entry would hand over is dropped",
    async () => {
      const s = await serve(false);
      const client = new Client(s.address);
      const r = await primary(client, R, 1);
      const h1 = await primary(client, machine("h1").manifest.deviceId, 1);
      const h2 = await primary(client, machine("h2").manifest.deviceId, 1);
      try {
        // ip.r's out-link 2 goes out in lanB.r's session 1: name member 99 (r has 3) instead.
        const transmit = {
          tableEntry: {
            tableId: TRANSMIT,
            match: [{ fieldId: 1, exact: { value: Buffer.from([2]) } }],
            action: {
              action: {
                actionId: actionId("transmit_session"),
                params: [
                  { paramId: 1, value: Buffer.from([99]) },
                  { paramId: 2, value: Buffer.from([1]) },
                ],
              },
            },
          },
        };
        expect(await codes(client, [{ type: "MODIFY", entity: transmit }])).toEqual([OK]);
        const [got] = await client.read({
          deviceId: String(R),
          entities: [{ tableEntry: { tableId: TRANSMIT, match: te(transmit).match } }],
        });
        expect((te(got ?? {}).action as M).action).toEqual((te(transmit).action as M).action);
        const ipH1 = machine("h1").manifest.members.find((m) => m.member === "ip.h1")?.number ?? 0;
        const payload = PACKET;
        h1.send({
          packet: {
            payload,
            metadata: [
              { metadataId: 1, value: Buffer.from([ipH1]) },
              { metadataId: 2, value: Buffer.from([1]) },
              { metadataId: 3, value: Buffer.from([0]) },
            ],
          },
        });
        expect(await h2.drain(300)).toEqual([]);
        expect(s.server.stats.packetOuts).toBe(1);
      } finally {
        for (const x of [r, h1, h2]) x.close();
        client.close();
        await s.server.close();
      }
    },
  );
});
