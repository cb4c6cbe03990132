// The native port process (native/port-helper.c, the `packet` port backend) speaks the records of
// port-records.ts: its framing, echoed through a pipe with --selftest whatever way the stream is
// cut; and, as root, on a veth pair in a network namespace of its own: the link type it opens,
// frames both ways byte for byte (a VLAN tag the kernel took off put back), and, stalled with a
// ring of two blocks, the frames the kernel dropped counted (DROPPED), none silent.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeHelper } from "../../src/serve/port-backend.js";
import { FLAG_CUT, RECORD, RecordReader, record } from "../../src/serve/port-records.js";
import { until } from "../helpers/wait.js";

const helper = nativeHelper();

interface Got {
  kind: number;
  port: number;
  flags: number;
  body: Buffer;
}

/** A port process, and the records it wrote so far. */
interface Running {
  readonly child: ChildProcess;
  readonly got: Got[];
  readonly exited: Promise<number | null>;
}

function run(command: string, args: string[]): Running {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
  const got: Got[] = [];
  const reader = new RecordReader((kind, port, flags, body) =>
    got.push({ kind, port, flags, body: Buffer.from(body) }),
  );
  child.stdout?.on("data", (chunk: Buffer) => reader.feed(chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, got, exited };
}

const records = [
  { kind: RECORD.FRAME, port: 0, flags: 0, body: Buffer.alloc(0) },
  { kind: RECORD.FRAME, port: 254, flags: FLAG_CUT, body: Buffer.alloc(65535, 0x5a) },
  { kind: RECORD.OPENED, port: 0, flags: 0, body: Buffer.from('["ETHERNET"]') },
  { kind: RECORD.FRAME, port: 3, flags: 0, body: Buffer.from("0200000000fe0200000000010800", "hex") },
];
const stream = Buffer.concat(records.map((r) => record(r.kind, r.port, r.body, r.flags)));

describe.skipIf(helper === undefined)("the native port process's records (--selftest)", () => {
  it.each([
    { name: "one write", cut: [] as number[] },
    { name: "cut inside a header", cut: [3, 9, 13] },
    { name: "cut inside a 64 KB body", cut: [20, 30000, 65540] },
    { name: "byte by byte at the edges", cut: [1, 2, 3, 4, 5, 6, 7, 8, 65543, 65544] },
  ])("$name: every record echoed as written", async ({ cut }) => {
    const p = run(helper ?? "", ["--selftest"]);
    const points = [0, ...cut, stream.length];
    for (const [i, end] of points.slice(1).entries()) p.child.stdin?.write(stream.subarray(points[i], end));
    p.child.stdin?.end();
    expect(await p.exited).toBe(0);
    const hex = (rs: Got[]): string[] => rs.map((r) => `${r.kind} ${r.port} ${r.flags} ${r.body.toString("hex")}`);
    expect(hex(p.got)).toEqual(hex(records));
  });

  it("a record longer than a frame: FAILED, exit 2", async () => {
    const p = run(helper ?? "", ["--selftest"]);
    p.child.stdin?.end(Buffer.concat([stream.subarray(0, 8), record(RECORD.FRAME, 9, Buffer.alloc(65536))]));
    expect(await p.exited).toBe(2);
    expect(p.got.map((g) => [g.kind, g.port, g.body.toString()])).toEqual([
      [RECORD.FRAME, 0, ""],
      [RECORD.FAILED, 9, "a record from strata longer than a frame"],
    ]);
  });
});

function skipReason(): string | undefined {
  if (helper === undefined) return "build/strata-port-helper is not built (Linux, npm run build with cc)";
  if (process.getuid?.() !== 0) return "not root (network namespaces and packet sockets need it)";
  const probe = `strata-np-probe-${process.pid}`;
  if (spawnSync("ip", ["netns", "add", probe], { stdio: "ignore" }).status !== 0)
    return "cannot create network namespaces here";
  spawnSync("ip", ["netns", "del", probe], { stdio: "ignore" });
  return undefined;
}
const reason = skipReason();
const ns = `strata-np-${process.pid}`;
const ip = (...args: string[]): void => {
  if (spawnSync("ip", args, { stdio: "ignore" }).status !== 0) throw new Error(`ip ${args.join(" ")} failed`);
};

/** A frame from 02:..:01 to 02:..:02 of EtherType 0x88b5 (local experimental), its payload numbered `n`. */
function frame(n: number, vlan?: number): Buffer {
  const f = Buffer.alloc(60 + (vlan === undefined ? 0 : 4), 0xa5);
  Buffer.from("020000000002020000000001", "hex").copy(f, 0);
  const at = vlan === undefined ? 12 : 16;
  if (vlan !== undefined) {
    f.writeUInt16BE(0x8100, 12);
    f.writeUInt16BE(vlan, 14);
  }
  f.writeUInt16BE(0x88b5, at);
  f.writeUInt32BE(n, at + 2);
  return f;
}

/** The frames of the test a port process passed on (not what the namespace's own stack may send). */
/** What the veth pair itself dropped (its backlog was full), both ends, both ways. */
function vethDrops(): number {
  const stats = JSON.parse(spawnSync("ip", ["-n", ns, "-s", "-j", "link", "show"], { encoding: "utf8" }).stdout) as {
    ifname: string;
    stats64: { rx: { dropped: number }; tx: { dropped: number } };
  }[];
  return stats
    .filter((s) => s.ifname === "na" || s.ifname === "nb")
    .reduce((n, s) => n + s.stats64.rx.dropped + s.stats64.tx.dropped, 0);
}

const frames = (p: Running): Got[] =>
  p.got.filter((g) => g.kind === RECORD.FRAME && [0x88b5, 0x8100].includes(g.body.readUInt16BE(12)));
const dropped = (p: Running): number =>
  p.got.filter((g) => g.kind === RECORD.DROPPED).reduce((n, g) => n + g.body.readUInt32LE(0), 0);

describe.skipIf(reason !== undefined)(
  `the native port process on a veth pair${reason !== undefined ? ` (skipped: ${reason})` : ""}`,
  () => {
    const all: Running[] = [];
    /** The port process on `iface` in the namespace, as port `index`, with a ring of `ring` bytes; once it opened. */
    const open = async (ring: number, index: number, iface: string): Promise<Running> => {
      const p = run("ip", ["netns", "exec", ns, helper ?? "", String(ring), `${index}=${iface}`]);
      all.push(p);
      await until(
        () => p.got.length > 0,
        () => `the port process on ${iface} said nothing`,
      );
      return p;
    };
    const send = (p: Running, index: number, fs: Buffer[]): void => {
      p.child.stdin?.write(Buffer.concat(fs.map((f) => record(RECORD.FRAME, index, f))));
    };

    beforeAll(() => {
      ip("netns", "add", ns);
      // No IPv6: its autoconfiguration would talk on the links.
      ip(
        "netns",
        "exec",
        ns,
        "sysctl",
        "-qw",
        "net.ipv6.conf.all.disable_ipv6=1",
        "net.ipv6.conf.default.disable_ipv6=1",
      );
      ip("-n", ns, "link", "add", "na", "type", "veth", "peer", "name", "nb");
      ip("-n", ns, "link", "set", "na", "up");
      ip("-n", ns, "link", "set", "nb", "up");
    });
    afterAll(() => {
      for (const p of all) if (p.child.exitCode === null) p.child.kill("SIGKILL");
      spawnSync("ip", ["netns", "del", ns], { stdio: "ignore" });
    });

    it("opens ETHERNET; frames go both ways byte for byte, a VLAN tag kept; stdin's end ends it, exit 0", async () => {
      const a = await open(1 << 20, 3, "na");
      const b = await open(1 << 20, 5, "nb");
      for (const p of [a, b])
        expect(p.got[0]).toMatchObject({ kind: RECORD.OPENED, body: Buffer.from('["ETHERNET"]') });
      const ab = [...Array.from({ length: 200 }, (_, n) => frame(n)), frame(200, 0x2007)];
      send(a, 3, ab);
      const ours = (p: Running): Buffer[] => frames(p).map((g) => g.body.subarray(0, 64));
      await until(
        () => frames(b).length >= ab.length,
        () => `nb got ${frames(b).length} of ${ab.length}`,
      );
      expect(frames(b).every((g) => g.port === 5 && g.flags === 0)).toBe(true);
      expect(ours(b)).toEqual(ab.map((f) => f.subarray(0, 64)));
      send(b, 5, [frame(7)]);
      await until(
        () => frames(a).length >= 1,
        () => "na got nothing",
      );
      expect(frames(a).map((g) => g.body)).toEqual([frame(7)]);
      for (const p of [a, b]) p.child.stdin?.end();
      expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
      expect(existsSync(`/proc/${a.child.pid}`)).toBe(false);
    });

    it("stalled, with a ring of two blocks: what the kernel dropped is reported, none silent", async () => {
      const a = await open(1 << 20, 0, "na");
      const b = await open(256 << 10, 1, "nb");
      const total = 20_000;
      const before = vethDrops();
      process.kill(b.child.pid ?? 0, "SIGSTOP");
      try {
        for (let n = 0; n < total; n += 500)
          send(
            a,
            0,
            Array.from({ length: 500 }, (_, k) => frame(n + k)),
          );
        a.child.stdin?.end();
        expect(await a.exited).toBe(0);
      } finally {
        process.kill(b.child.pid ?? 0, "SIGCONT");
      }
      b.child.stdin?.end();
      expect(await b.exited).toBe(0);
      expect(dropped(b)).toBeGreaterThan(0);
      expect(frames(b).length + dropped(b) + vethDrops() - before).toBe(total);
    });
  },
);
