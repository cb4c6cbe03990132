// The library's Emulation: packets injected one at a time come back as deliveries and named drops, and tables are
// written by member and role in the description's notation, a batch whole or not at all.

import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test, vi } from "vitest";
import { Emulation, type RowWrite, TableWriteError } from "../../src/index.js";
import { Tables } from "../../src/wasm/tables.js";

const ROUTER = "examples/ip-router/network.yaml";

/** The first packet of a pcap file (the DNS query h1 sends: 10.0.1.1 → 10.0.2.2, in Ethernet to r). */
function firstPacket(file: string): Uint8Array {
  const b = readFileSync(file);
  return new Uint8Array(b.subarray(40, 40 + b.readUInt32LE(32)));
}
const QUERY = firstPacket("pcaps/example-router-h1.pcap");

/** `packet` with `address` at `offset` (16: dst, 12: src) of its IPv4 header at `ip`, the checksum made again. */
function withIpv4(packet: Uint8Array, ip: number, offset: number, address: string): Uint8Array {
  const p = packet.slice();
  address.split(".").forEach((o, i) => (p[ip + offset + i] = Number(o)));
  p[ip + 10] = 0;
  p[ip + 11] = 0;
  let sum = 0;
  for (let i = ip; i < ip + 20; i += 2) sum += ((p[i] ?? 0) << 8) | (p[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  p[ip + 10] = (~sum >> 8) & 0xff;
  p[ip + 11] = ~sum & 0xff;
  return p;
}
/** The query sent to another IPv4 address. */
const to = (address: string): Uint8Array => withIpv4(QUERY, 14, 16, address);

let open: Emulation[] = [];
const load = (...args: Parameters<typeof Emulation.load>): Emulation => {
  const em = Emulation.load(...args);
  open.push(em);
  return em;
};
afterEach(async () => {
  for (const em of open) await em.close();
  open = [];
});

describe("inject", () => {
  test.each([
    { case: "a query to h2", packet: QUERY, delivered: ["ip:h2"], dropped: [] },
    { case: "no route", packet: to("10.9.9.9"), delivered: [], dropped: [["ip:r", "forward-miss", 1]] },
    {
      case: "not for r",
      packet: QUERY.slice().fill(0x77, 0, 6),
      delivered: [],
      dropped: [["lanA:r", "acquire-miss", 1]],
    },
  ])("$case", async ({ packet, delivered, dropped }) => {
    const em = load(ROUTER);
    const told: string[] = [];
    em.on("deliver", (d) => told.push(`deliver ${d.member}`));
    em.on("drop", (d) => told.push(`drop ${d.member} ${d.reason}`));
    const out = await em.inject("lanA:h1.1", packet);
    expect(out.delivered.map((d) => d.member)).toEqual(delivered);
    expect(out.dropped.map((d) => [d.member, d.reason, d.count])).toEqual(dropped);
    expect(told).toEqual([...delivered.map((m) => `deliver ${m}`), ...dropped.map(([m, r]) => `drop ${m} ${r}`)]);
  });

  test("a delivery is a packet-in for the members watched, and its bytes are the packet's", async () => {
    const em = load(ROUTER, { packetIns: ["ip:h2"] });
    const ins: string[] = [];
    em.onPacketIn((p) => ins.push(`${p.member} on ${p.inLink}, ${p.data.length} bytes`));
    await em.packetOut({ at: "lanA:h1.1", data: QUERY });
    await em.packetOut([{ at: "lanB:h2.1", data: firstPacket("pcaps/example-router-h2.pcap") }]);
    // The query's IPv4 packet (its Ethernet header taken off) reaches ip:h2 on link 1; the answer reaches ip:h1.
    expect(ins).toEqual([`ip:h2 on 1, ${QUERY.length - 14} bytes`]);
  });

  test("packetIns naming no member is a bad option, said in one line", () => {
    expect(() => Emulation.load(ROUTER, { packetIns: ["ip:h9"] })).toThrow(
      new RangeError(
        "packetIns: there is no member 'ip:h9' (members: lanA:h1, lanA:r, lanB:h2, lanB:r, ip:h1, ip:r, ip:h2)",
      ),
    );
  });

  test("the fates of a packet are read without any table's hit counters", async () => {
    const em = load(ROUTER);
    const hits = vi.spyOn(Tables.prototype, "hits");
    try {
      expect((await em.inject("lanA:h1.1", QUERY)).delivered.length).toBe(1);
      expect((await em.inject("lanA:h1.1", to("10.9.9.9"))).dropped.length).toBe(1);
      expect(hits).not.toHaveBeenCalled();
    } finally {
      hits.mockRestore();
    }
  });

  test("a packet leaving on an external link is an exit, with its bytes as they left", async () => {
    const em = load("examples/live-router/network.yaml");
    const exits: string[] = [];
    em.on("exit", (x) => exits.push(x.link));
    const out = await em.inject("lanA:hostA", QUERY, { sec: 1_700_000_000, nsec: 5 });
    expect(exits).toEqual(["lanB:hostB"]);
    expect(out.delivered).toEqual([]);
    expect(out.dropped).toEqual([]);
    const left = out.exited[0]?.data ?? new Uint8Array();
    // A new Ethernet header (r's lanB MAC to h2's), the IPv4 packet after it with its TTL one less.
    expect(Buffer.from(left.subarray(0, 12)).toString("hex")).toBe("020000000b02020000000bfe");
    expect(left[14 + 8]).toBe((QUERY[14 + 8] ?? 0) - 1);
  });

  test("many packets run in one batch, each counted", async () => {
    const em = load(ROUTER);
    const out = await em.injectMany(
      Array.from({ length: 100 }, (_, i) => ({ at: "lanA:h1.1", data: i % 2 === 0 ? QUERY : to("10.9.9.9") })),
    );
    expect(out.delivered.length).toBe(50);
    expect(out.dropped).toEqual([{ member: "ip:r", reason: "forward-miss", count: 50 }]);
    const s = await em.summary();
    expect(s.packets.injected).toBe(100);
  });
});

const route = (op: RowWrite["op"], dst: string, out: number): RowWrite => ({
  op,
  member: "ip:r",
  table: "forward",
  row: { match: { dst }, out },
});

describe("tables", () => {
  test("a row inserted routes the next packet, and counts its hits", async () => {
    const em = load(ROUTER);
    await em.write([route("insert", "10.9.0.0/16", 2)]);
    const out = await em.inject("lanA:h1.1", to("10.9.9.9"));
    // r sends it to h2, whose acquire table takes only its own address.
    expect(out.dropped.map((d) => `${d.member} ${d.reason}`)).toEqual(["ip:h2 acquire-miss"]);
    const rows = await em.read("ip:r", "forward");
    expect(rows.map((r) => [r.text, r.by, r.hits])).toEqual([
      ["dst 10.0.1.0/24 → out 1", "description", 0],
      ["dst 10.0.2.0/24 → out 2", "description", 0],
      ["dst 10.9.0.0/16 → out 2", "api", 1],
    ]);
    expect(rows[2]?.row).toEqual({ match: { dst: "10.9.0.0/16" }, out: 2 });
    await em.write([route("delete", "10.9.0.0/16", 2), route("delete", "10.0.2.0/24", 2)]);
    expect((await em.inject("lanA:h1.1", QUERY)).dropped.map((d) => d.reason)).toEqual(["forward-miss"]);
    expect((await em.read("ip:r", "forward")).map((r) => r.text)).toEqual(["dst 10.0.1.0/24 → out 1"]);
  });

  test("modify: the entry with the row's match takes the row's action", async () => {
    const em = load(ROUTER);
    await em.write([route("modify", "10.0.2.0/24", 1)]);
    // Back out of link 1 to h1, whose acquire table takes only its own address.
    expect((await em.inject("lanA:h1.1", QUERY)).dropped.map((d) => `${d.member} ${d.reason}`)).toEqual([
      "ip:h1 acquire-miss",
    ]);
    expect((await em.read("ip:r", "forward")).map((r) => [r.text, r.by, r.hits])).toEqual([
      ["dst 10.0.1.0/24 → out 1", "description", 0],
      ["dst 10.0.2.0/24 → out 1", "api", 1],
    ]);
  });

  test.each([
    {
      case: "a link the member does not have",
      batch: [route("insert", "10.9.0.0/16", 2), route("insert", "10.8.0.0/16", 9)],
      error: { code: "BadRow", member: "ip:r", table: "forward", index: 1 },
    },
    {
      case: "a field the design does not have",
      batch: [{ op: "insert", member: "ip:r", table: "forward", row: { match: { vlan: 5 }, out: 1 } } as RowWrite],
      error: { code: "BadRow", member: "ip:r", table: "forward", index: 0 },
    },
    {
      case: "a row the table holds already",
      batch: [route("insert", "10.9.0.0/16", 2), route("insert", "10.0.2.0/24", 2)],
      error: { code: "DuplicateEntry", member: "ip:r", table: "forward", index: 1 },
    },
    {
      case: "a row the table does not hold",
      batch: [route("insert", "10.9.0.0/16", 2), route("delete", "10.7.0.0/16", 2)],
      error: { code: "NotFound", index: 1 },
    },
    {
      case: "no such member",
      batch: [{ ...route("insert", "10.9.0.0/16", 2), member: "ip:x" }],
      error: { code: "NoSuchMember", index: 0 },
    },
    {
      case: "no such table",
      batch: [
        route("insert", "10.9.0.0/16", 2),
        { op: "insert", member: "lanA:h1", table: "filter", row: { out: 1 } } as unknown as RowWrite,
      ],
      error: { code: "NoSuchTable", member: "lanA:h1", table: "filter", index: 1 },
    },
  ])("$case: a typed error, and nothing of the batch applied", async ({ batch, error }) => {
    const em = load(ROUTER);
    const before = await em.read("ip:r", "forward");
    const err = await em.write(batch).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TableWriteError);
    expect(err).toMatchObject(error);
    expect((err as Error).message).toMatch(/write \d+: /);
    expect(await em.read("ip:r", "forward")).toEqual(before);
  });

  test("a ternary table: a written row ranks above the rows there", async () => {
    const em = load("examples/filter-chain/network.yaml");
    // m1 passes only packets from m0 (10.0.0.1) and drops the rest that come in on link 1.
    const fromM9 = withIpv4(firstPacket("pcaps/example-chain-m0.pcap"), 0, 12, "10.0.0.9");
    expect((await em.inject("chain:m0.1", fromM9)).dropped.map((d) => `${d.member} ${d.reason}`)).toEqual([
      "chain:m1 forward-drop",
    ]);
    await em.write([
      { op: "insert", member: "m1", table: "forward", row: { in: 1, match: { src: "10.0.0.9" }, out: 2 } },
    ]);
    expect((await em.inject("chain:m0.1", fromM9)).delivered.map((d) => d.member)).toEqual(["chain:m3"]);
    const rows = await em.read("chain:m1", "forward");
    expect(rows.map((r) => [r.text, r.by, r.priority, r.hits])).toEqual([
      ["in 1, src 10.0.0.9 → out 2", "api", 4, 1],
      ["in 1, src 10.0.0.1, dst 10.0.3.0/24 → out 2", "description", 3, 0],
      ["in 1 → drop", "description", 2, 1],
      ["in 2, dst 10.0.0.0/24 → out 1", "description", 1, 0],
    ]);
  });

  test("tables start empty, and a controller fills them", async () => {
    const em = load(ROUTER, { emptyTables: true });
    expect(await em.read("ip:r", "forward")).toEqual([]);
    expect((await em.inject("lanA:h1.1", QUERY)).dropped.map((d) => `${d.member} ${d.reason}`)).toEqual([
      "lanA:r acquire-miss",
    ]);
  });
});
