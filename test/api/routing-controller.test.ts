// The routing controller (examples/routing-controller/routing.ts) runs the same on both Devices: an Emulation in
// process and a P4RuntimeDevice on strata's own P4Runtime server, on a ring of four routers r1-r2-r3-r4-r1 with a host
// each (examples/routing-controller/network.yaml, whose routers know only their own host). The controller writes every
// route; packets between hosts are delivered; then the link r1-r2 goes down — really, in the emulation (setLink), whose
// event the emulation's controller hears and the test passes on to the P4Runtime one (a P4Runtime device has no link
// state) — and the controllers rewrite only the routes that moved: packets go round the other way, crossing the
// routers the worked table below says, on both devices, whose rows read back the same.

import { afterEach, describe, expect, test } from "vitest";
import { routing } from "../../examples/routing-controller/routing.js";
import {
  type Device,
  Emulation,
  type LinkChange,
  type MemberChange,
  P4RuntimeDevice,
  type PacketIn,
  readDescription,
} from "../../src/index.js";
import { until } from "../helpers/wait.js";
import { packet, PAIRS, R1_R2, told, TTL } from "./controller-cases.js";
import { serve } from "./p4runtime-server.js";

const RING = "examples/routing-controller/network.yaml";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

// Each router's routes once r1-r2 is down (the line r2 r3 r4 r1), by hand: member → port.
const after: Record<string, Record<string, number>> = {
  r1: { r2: 1, h2: 1, r3: 1, h3: 1, r4: 1, h4: 1 },
  r2: { r1: 2, h1: 2, r3: 2, h3: 2, r4: 2, h4: 2 },
  r3: { r2: 1, h2: 1, r1: 2, h1: 2, r4: 2, h4: 2 },
  r4: { r3: 1, h3: 1, r1: 2, h1: 2, r2: 1, h2: 1 },
};

/** Sends a packet from host n to host m; resolves with the routers it crossed (its TTL spent), once it is delivered. */
async function crossed(device: Device, from: number, to: number): Promise<number> {
  const got: PacketIn[] = [];
  const off = device.onPacketIn((p) => {
    if (p.member === `ip:h${to}`) got.push(p);
  });
  try {
    await device.packetOut({ at: `ip:h${from}`, data: packet(from, to) });
    await until(
      () => got.length > 0,
      () => `h${from} → h${to}: not delivered`,
    );
    return TTL - (got[0]?.data[8] ?? TTL);
  } finally {
    off();
  }
}

async function forwardRows(device: Device, router: string): Promise<string[]> {
  return (await device.read(`ip:${router}`, "forward")).filter((e) => e.by === "api").map((e) => e.text);
}

describe("the routing controller on an Emulation and on a P4RuntimeDevice", () => {
  test("writes every route, then only those a failed link moves; packets go round it", async () => {
    const em = Emulation.load(RING);
    closers.push(() => em.close());
    const server = await serve(RING);
    closers.push(() => server.close());
    const p4 = await P4RuntimeDevice.connect(RING, { address: server.address });
    closers.push(() => p4.close());
    const p4Links = told();
    em.onLinkChange((c) => p4Links.tell(c)); // the caller passes on what the emulation tells
    const description = readDescription(RING);
    const devices: { name: string; device: Device; ctl: Awaited<ReturnType<typeof routing>> }[] = [
      { name: "emulation", device: em, ctl: await routing(em, description, "ip", em) },
      { name: "p4runtime", device: p4, ctl: await routing(p4, description, "ip", p4Links) },
    ];
    const hops = async (which: "before" | "after") => {
      const out: Record<string, Record<string, number>> = {};
      for (const { name, device } of devices)
        for (const { from, to } of PAIRS) (out[`h${from} → h${to}`] ??= {})[name] = await crossed(device, from, to);
      return out;
    };
    const want = (which: "before" | "after") =>
      Object.fromEntries(PAIRS.map((p) => [`h${p.from} → h${p.to}`, { emulation: p[which], p4runtime: p[which] }]));

    expect(await hops("before")).toEqual(want("before"));

    const change = await em.setLink("ip:r1.2", false);
    expect(change).toEqual({ links: [R1_R2], up: false });
    for (const { ctl } of devices) await ctl.settled();
    expect(await hops("after")).toEqual(want("after"));

    for (const { name, ctl } of devices) {
      // 24 routes (4 routers, 6 members each beyond their own host), then the 8 that moved: modified, nothing else.
      expect({ name, written: ctl.written }).toEqual({
        name,
        written: [
          { inserted: 24, modified: 0, deleted: 0 },
          { inserted: 0, modified: 8, deleted: 0 },
        ],
      });
      expect([...ctl.down]).toEqual([R1_R2]);
    }
    for (const [router, routes] of Object.entries(after)) {
      const addr = (m: string) => `10.0.${m.startsWith("r") ? `0.${m.slice(1)}` : `${m.slice(1)}.1`}/32`;
      const expected = Object.entries(routes)
        .map(([m, port]) => `dst ${addr(m)} → out ${port}`)
        .sort();
      expect({ router, rows: (await forwardRows(em, router)).sort() }).toEqual({ router, rows: expected });
      expect({ router, rows: (await forwardRows(p4, router)).sort() }).toEqual({ router, rows: expected });
    }

    // Back up: the same 8 routes move back, and packets take the short way again.
    await em.setLink(R1_R2, true);
    for (const { ctl } of devices) await ctl.settled();
    for (const { ctl } of devices) expect(ctl.written[2]).toEqual({ inserted: 0, modified: 8, deleted: 0 });
    expect(await hops("before")).toEqual(want("before"));
  });
});

// Emulation.setLink itself: a link really down drops what is sent on it; a link it has not is a RangeError.
const setLinks: { name: string; link: string; up: boolean; links?: string[]; error?: RegExp }[] = [
  { name: "by MEMBER.ID", link: "ip:r1.2", up: false, links: [R1_R2] },
  { name: "by name", link: R1_R2, up: false, links: [R1_R2] },
  {
    name: "a member with no such link",
    link: "ip:r1.9",
    up: false,
    error: /setLink: .*r1 has no link with identifier 9/,
  },
  { name: "no such link", link: "ip:nowhere", up: false, error: /setLink: no link 'ip:nowhere'/ },
];

describe.each(setLinks)("Emulation.setLink: $name", ({ link, up, links, error }) => {
  test(error === undefined ? "takes the link down and says so" : "is refused", async () => {
    const em = Emulation.load(RING);
    closers.push(() => em.close());
    // h1 → h2 on a route the test writes: r1 out 2 (towards r2), the link that goes down.
    await em.write([
      { op: "insert", member: "ip:r1", table: "forward", row: { match: { dst: "10.0.2.1/32" }, out: 2 } },
    ]);
    const events: LinkChange[] = [];
    em.on("linkDown", (c) => events.push(c));
    if (error !== undefined) {
      await expect(em.setLink(link, up)).rejects.toThrow(error);
      expect(events).toEqual([]);
      expect((await em.inject("ip:h1", packet(1, 2))).delivered.map((d) => d.member)).toEqual(["ip:h2"]);
      return;
    }
    expect(await em.setLink(link, up)).toEqual({ links, up });
    expect(events).toEqual([{ links, up }]);
    const outcome = await em.inject("ip:h1", packet(1, 2));
    expect(outcome.delivered).toEqual([]);
    expect(outcome.dropped.reduce((n, d) => n + d.count, 0)).toBe(1);
    await em.setLink(link, true);
    expect((await em.inject("ip:h1", packet(1, 2))).delivered.map((d) => d.member)).toEqual(["ip:h2"]);
  });
});

// Emulation.setMember: a member down drops what reaches it (member-down), up again forwards; one it has not is a
// RangeError.
const setMembers: { name: string; member: string; members?: string[]; error?: RegExp }[] = [
  { name: "a router on the way", member: "ip:r2", members: ["ip:r2"] },
  { name: "the destination host", member: "ip:h2", members: ["ip:h2"] },
  { name: "no such member", member: "ip:nowhere", error: /setMember: no member 'ip:nowhere' \(write NETWORK:MEMBER;/ },
];

describe.each(setMembers)("Emulation.setMember: $name", ({ member, members, error }) => {
  test(error === undefined ? "takes the member down and back up, and says so" : "is refused", async () => {
    const em = Emulation.load(RING);
    closers.push(() => em.close());
    await em.write([
      { op: "insert", member: "ip:r1", table: "forward", row: { match: { dst: "10.0.2.1/32" }, out: 2 } },
    ]);
    const events: MemberChange[] = [];
    em.on("memberDown", (c) => events.push(c));
    em.on("memberUp", (c) => events.push(c));
    const delivered = async () => (await em.inject("ip:h1", packet(1, 2))).delivered.map((d) => d.member);
    if (error !== undefined) {
      await expect(em.setMember(member, false)).rejects.toThrow(error);
      expect(events).toEqual([]);
      expect(await delivered()).toEqual(["ip:h2"]);
      return;
    }
    expect(await em.setMember(member, false)).toEqual({ members, up: false });
    const outcome = await em.inject("ip:h1", packet(1, 2));
    expect(outcome.delivered).toEqual([]);
    expect(outcome.dropped).toEqual([{ member, reason: "member-down", count: 1 }]);
    expect(await em.setMember(member, true)).toEqual({ members, up: true });
    expect(events).toEqual([
      { members, up: false },
      { members, up: true },
    ]);
    expect(await delivered()).toEqual(["ip:h2"]);
  });
});

test("a link failure in process: recomputed and its rows written, in CPU time", async () => {
  const em = Emulation.load(RING);
  closers.push(() => em.close());
  const ctl = await routing(em, readDescription(RING), "ip", em);
  const cpu: number[] = [];
  const runs = 100;
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    await em.setLink(R1_R2, i % 2 === 1); // down, up, down, …
    await ctl.settled();
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
  }
  // Every change moved the same 8 routes, and only those were written.
  expect(new Set(ctl.written.slice(1).map((w) => JSON.stringify(w)))).toEqual(
    new Set([JSON.stringify({ inserted: 0, modified: 8, deleted: 0 })]),
  );
  expect(ctl.written.length).toBe(runs + 1);
  cpu.sort((a, b) => a - b);
  const median = cpu[runs >> 1] ?? 0;
  const p90 = cpu[Math.floor(runs * 0.9)] ?? 0;
  console.log(
    `link change recomputed and 8 rows written in process, ${runs} runs: ` +
      `median ${median.toFixed(3)} ms of CPU, p90 ${p90.toFixed(3)} ms`,
  );
});

// A member down: its links carry nothing, so the controller routes round it as round a link down. r2 down in the ring
// (the line r3 r4 r1 left): every router's routes to r2 and h2 go (r2's own six too), r3's to r1 and h1 move to r4.
test("a router taken down (setMember): the routes round it are written, and put back when it is up", async () => {
  const em = Emulation.load(RING);
  closers.push(() => em.close());
  const ctl = await routing(em, readDescription(RING), "ip", em);
  await em.setMember("ip:r2", false);
  await ctl.settled();
  expect({ down: [...ctl.membersDown], written: ctl.written.at(-1) }).toEqual({
    down: ["r2"],
    written: { inserted: 0, modified: 2, deleted: 12 },
  });
  expect((await forwardRows(em, "r3")).sort()).toEqual(
    ["dst 10.0.0.1/32 → out 2", "dst 10.0.1.1/32 → out 2", "dst 10.0.0.4/32 → out 2", "dst 10.0.4.1/32 → out 2"].sort(),
  );
  expect(await crossed(em, 3, 1)).toBe(3); // h3 → r3 → r4 → r1 → h1, not through r2
  await em.setMember("ip:r2", true);
  await ctl.settled();
  expect({ down: [...ctl.membersDown], written: ctl.written.at(-1) }).toEqual({
    down: [],
    written: { inserted: 12, modified: 2, deleted: 0 },
  });
});
