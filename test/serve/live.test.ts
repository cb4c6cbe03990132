// `strata serve` with real interfaces: two network namespaces (hosts A and B)
// each joined by a veth pair to a third namespace where strata runs the router
// of examples/live-router, its external links plugged into the veth ends.
// ping and a UDP exchange between A and B cross the emulated router (TTL − 1,
// new Ethernet headers); a forward row deleted at run time stops them, and put
// back lets them through again; an interface going down and up closes and
// reopens its port alone, without stopping strata; Ctrl-C writes the captures and
// the summary. An interface flapping leaves the other port's frames untouched;
// a port process stalled loses nothing while its capture buffer holds what
// arrives, and what the capture drops past that is counted, in the command
// counts, the report and summary.json. All of it with each port backend: cap
// (libpcap) and packet (the native port process, AF_PACKET rings), the two side
// by side, each in namespaces of its own: most of the time is spent waiting (pings,
// timeouts, frames a millisecond apart), and one backend's waits are the other's.
//
// It needs root (namespaces, raw sockets), iproute2, ping, ethtool, and the optional
// package cap (libpcap) or build/strata-port-helper (npm run build with a C compiler)
// for each backend: without them it is skipped and says why. .ci/run installs them,
// so in CI it runs.

import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCap, nativeHelper } from "../../src/serve/port-backend.js";
import { HANG_MS, until } from "../helpers/wait.js";

const root = new URL("../..", import.meta.url).pathname;
const cli = join(root, "dist/src/cli/main.js");
const spec = join(root, "examples/live-router/network.yaml");

function has(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
}

/** Why the test cannot run here, or undefined. */
function skipReason(): string | undefined {
  if (process.platform !== "linux") return "live ports are tested on Linux only";
  if (process.getuid?.() !== 0) return "not root (network namespaces and raw sockets need it)";
  if (!has("ip", ["-V"])) return "no ip command (apt-get install iproute2)";
  if (!has("ping", ["-V"])) return "no ping command (apt-get install iputils-ping)";
  if (!has("ethtool", ["--version"])) return "no ethtool command (apt-get install ethtool)";
  if (!existsSync(cli)) return "strata is not built (npm run build)";
  const probe = `strata-probe-${process.pid}`;
  if (!has("ip", ["netns", "add", probe])) return "cannot create network namespaces here";
  has("ip", ["netns", "del", probe]);
  return undefined;
}

const reason = skipReason();

/** Why a port backend cannot run here, or undefined. */
function backendMissing(backend: string): string | undefined {
  if (backend === "packet")
    return nativeHelper() === undefined ? "build/strata-port-helper is not built (npm run build with cc)" : undefined;
  const cap = loadCap();
  return cap.cap === undefined
    ? `the optional package cap is not loaded (${cap.error}): apt-get install libpcap-dev, then npm install`
    : undefined;
}

/**
 * The port backends, each with a stall its capture cannot hold (frames, a millisecond): cap's buffer holds 2,046
 * frames at any rate; a packet ring's 1,024 blocks are each handed over a few ms after their first frame, so they hold
 * 2-4 s of frames at low rates (and a million at high ones): 6,000 frames a millisecond apart overflow both.
 */
const backends = [
  { backend: "cap", overflow: { count: 6000, perMs: 50 } },
  { backend: "packet", overflow: { count: 6000, perMs: 1 } },
].map((b) => {
  const missing = backendMissing(b.backend);
  return { ...b, missing, title: missing === undefined ? b.backend : `${b.backend} (skipped: ${missing})` };
});
/** A backend's namespaces: hosts A and B, and E where strata runs. */
interface Namespaces {
  readonly a: string;
  readonly b: string;
  readonly e: string;
}
const namespaces = (backend: string): Namespaces => ({
  a: `strata-a-${process.pid}-${backend}`,
  b: `strata-b-${process.pid}-${backend}`,
  e: `strata-e-${process.pid}-${backend}`,
});

const ip = (...args: string[]): string => execFileSync("ip", args, { encoding: "utf8" });
/**
 * `cmd` in namespace `name`, its exit code and output; waits without blocking, so the other backend runs on. The
 * limit catches a hang: strata serve's start (a compile, the data plane loaded) took over 20 s at load 28.
 */
const inNs = (name: string, cmd: string[], timeout = HANG_MS): Promise<{ status: number | null; out: string }> =>
  new Promise((resolve) => {
    const child = spawn("ip", ["netns", "exec", name, ...cmd], { timeout });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    child.on("close", (status) => resolve({ status, out }));
  });

/** strata serve in its namespace, with what it has written so far. */
interface Served {
  readonly child: ChildProcess;
  stderr: string;
  stdout: string;
  readonly exited: Promise<number | null>;
}

/** Every strata serve a test started (killed at the end if still running). */
const served: Served[] = [];

/** The command line of strata serve on `ports` (`--port` each) with port backend `backend`, then `args`. */
function serveCommand(backend: string, ports: readonly string[], args: readonly string[] = []): string[] {
  return [
    process.execPath,
    cli,
    "serve",
    spec,
    ...ports.flatMap((p) => ["--port", p]),
    "--port-backend",
    backend,
    ...args,
  ];
}

/** strata serve in namespace E with `args` and port backend `backend`; waits until it serves. */
async function startServe(ns: Namespaces, backend: string, args: string[]): Promise<Served> {
  const child = spawn(
    "ip",
    ["netns", "exec", ns.e, ...serveCommand(backend, ["lanA:hostA=eA", "lanB:hostB=eB"], args)],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const s: Served = { child, stderr: "", stdout: "", exited };
  served.push(s);
  child.stderr?.on("data", (b: Buffer) => (s.stderr += b.toString()));
  child.stdout?.on("data", (b: Buffer) => (s.stdout += b.toString()));
  await waitFor(
    s,
    new RegExp(`^serving .* on lanA:hostA=eA, lanB:hostB=eB \\(${backend} ports\\); Ctrl-C stops$`, "m"),
  );
  return s;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The port process of strata serve (pid `parent`) that holds `iface`. */
function portProcess(parent: number, iface: string): number {
  for (const dir of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const ppid = Number(
        readFileSync(`/proc/${dir}/stat`, "utf8")
          .replace(/^.*\) /s, "")
          .split(" ")[1],
      );
      const args = readFileSync(`/proc/${dir}/cmdline`, "utf8").split("\0");
      if (
        ppid === parent &&
        args.some((a) => a.endsWith("port-helper.js") || a.endsWith("strata-port-helper")) &&
        args.some((a) => a.endsWith(`=${iface}`))
      )
        return Number(dir);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no port process for ${iface} under ${parent}`);
}

/**
 * Host A sends `count` UDP datagrams to r's own address (10.0.1.254: delivered to ip.r), `perMs` a
 * millisecond; resolves with how many the kernel took.
 */
async function sendToR(ns: Namespaces, count: number, perMs: number): Promise<number> {
  const sender = spawn("ip", [
    "netns",
    "exec",
    ns.a,
    process.execPath,
    "-e",
    `const d = require("dgram").createSocket("udp4");
     let sent = 0, done = 0, failed = 0;
     const tick = () => {
       for (let i = 0; i < ${perMs} && sent < ${count}; i++, sent++)
         d.send(Buffer.alloc(18), 9, "10.0.1.254", (err) => { if (err) failed++; ` +
      `if (++done === ${count}) { console.log(${count} - failed); process.exit(0); } });
       if (sent < ${count}) setTimeout(tick, 1);
     };
     tick();`,
  ]);
  let said = "";
  sender.stdout.on("data", (b: Buffer) => (said += b.toString()));
  await new Promise((resolve) => sender.on("exit", resolve));
  return Number(said.trim());
}

interface PortCounts {
  port: string;
  received: number;
  droppedByInterface: number | null;
  droppedByCapture: number | null;
  droppedByStrata: number;
}

async function waitFor(s: Served, pattern: RegExp): Promise<void> {
  await until(
    () => pattern.test(s.stderr),
    () => `strata serve did not say ${pattern}; stderr: ${s.stderr}`,
  );
}

/** The packets strata serve `s` has dropped so far, from its `counts` command. */
async function dropped(s: Served): Promise<number> {
  const said = /^injected \d+, copies \d+, delivered \d+, dropped (\d+),/gm;
  const before = [...s.stderr.matchAll(said)].length;
  s.child.stdin?.write("counts\n");
  await until(
    () => [...s.stderr.matchAll(said)].length > before,
    () => `strata serve did not answer counts; stderr: ${s.stderr}`,
  );
  return Number([...s.stderr.matchAll(said)].at(-1)?.[1]);
}

/** ping's arguments for `count` echoes to `to` that should all be answered: it waits for them, 20 s at most. */
function answered(count: number, to: string): string[] {
  return ["ping", "-c", String(count), "-i", "0.2", "-w", "20", to];
}

/**
 * How many answers a ping that waited for them (`answered`) got, and their TTLs. While answers are slow it sends more
 * echoes, so a busy machine can see more answers than it asked for: 4 for `-c 3` when each took over a second.
 */
function answers(out: string): { received: number; ttls: string[] } {
  const said = /\d+ packets transmitted, (\d+) received/.exec(out);
  return { received: Number(said?.[1] ?? 0), ttls: out.match(/ttl=\d+/g) ?? [] };
}

/**
 * A UDP exchange: a node echo server in B, a node client in A that tries `tries` times, `tryMs` apart, and ends at the
 * first answer; the client's answer or "timeout".
 */
async function udpExchange(ns: Namespaces, message: string, tryMs = 700, tries = 3): Promise<string> {
  const server = spawn("ip", [
    "netns",
    "exec",
    ns.b,
    process.execPath,
    "-e",
    `const d = require("dgram").createSocket("udp4");
     d.on("message", (m, r) => d.send(Buffer.concat([Buffer.from("echo "), m]), r.port, r.address));
     d.bind(9999, "10.0.2.2", () => console.log("ready"));
     setTimeout(() => process.exit(0), ${tries * tryMs + 10000});`,
  ]);
  try {
    await new Promise<void>((resolve, reject) => {
      let said = "";
      server.stdout.on("data", (b: Buffer) => {
        said += b.toString();
        if (said.includes("ready")) resolve();
      });
      server.on("exit", () => reject(new Error("the UDP server in B ended before it listened")));
    });
    const client = spawn("ip", [
      "netns",
      "exec",
      ns.a,
      process.execPath,
      "-e",
      `const d = require("dgram").createSocket("udp4");
       let tries = 0;
       const send = () => { if (tries++ === ${tries}) { console.log("timeout"); process.exit(0); ` +
        `} d.send(${JSON.stringify(message)}, 9999, "10.0.2.2"); setTimeout(send, ${tryMs}); };
       d.on("message", (m) => { console.log(m.toString()); process.exit(0); });
       send();`,
    ]);
    let answer = "";
    client.stdout.on("data", (b: Buffer) => (answer += b.toString()));
    await new Promise((resolve) => client.on("exit", resolve));
    return answer.trim();
  } finally {
    server.kill();
  }
}

/** The IPv4 TTLs of the frames in a pcap written by strata, by source MAC; parsed here, not with strata's reader. */
function ttlsBySource(file: string): Map<string, number[]> {
  const b = readFileSync(file);
  const le = b.readUInt32LE(0) === 0xa1b23c4d || b.readUInt32LE(0) === 0xa1b2c3d4;
  const u32 = (at: number): number => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  const out = new Map<string, number[]>();
  for (let at = 24; at + 16 <= b.length;) {
    const len = u32(at + 8);
    const frame = b.subarray(at + 16, at + 16 + len);
    at += 16 + len;
    if (frame.length < 34 || frame.readUInt16BE(12) !== 0x0800) continue;
    const src = [...frame.subarray(6, 12)].map((x) => x.toString(16).padStart(2, "0")).join(":");
    out.set(src, [...(out.get(src) ?? []), frame[22] ?? -1]);
  }
  return out;
}

describe.skipIf(reason !== undefined)(
  `strata serve on live interfaces${reason !== undefined ? ` (skipped: ${reason})` : ""}`,
  () => {
    const out = mkdtempSync(join(tmpdir(), "strata-live-"));

    afterAll(() => {
      for (const s of served) if (s.child.exitCode === null) s.child.kill("SIGKILL");
      for (const { backend } of backends)
        for (const n of Object.values(namespaces(backend))) spawnSync("ip", ["netns", "del", n], { stdio: "ignore" });
      rmSync(out, { recursive: true, force: true });
    });

    // The backends side by side (each its own namespaces), each one's tests in turn.
    describe.concurrent.each(backends)("--port-backend $title", ({ backend, overflow, missing }) => {
      const test = missing === undefined ? it.sequential : it.skip;
      const ns = namespaces(backend);

      beforeAll(async () => {
        if (missing !== undefined) return;
        for (const n of Object.values(ns)) {
          ip("netns", "add", n);
          // No IPv6 (its autoconfiguration would talk on the links) and loopback up.
          await inNs(n, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]);
          ip("-n", n, "link", "set", "lo", "up");
        }
        ip("link", "add", "hA", "netns", ns.a, "type", "veth", "peer", "name", "eA", "netns", ns.e);
        ip("link", "add", "hB", "netns", ns.b, "type", "veth", "peer", "name", "eB", "netns", ns.e);
        // The hosts have the MACs r's send rows write, and static neighbours for r (there is no ARP in the emulation).
        ip("-n", ns.a, "link", "set", "hA", "address", "02:00:00:00:0a:01", "up");
        ip("-n", ns.b, "link", "set", "hB", "address", "02:00:00:00:0b:02", "up");
        ip("-n", ns.e, "link", "set", "eA", "up");
        ip("-n", ns.e, "link", "set", "eB", "up");
        // The hosts compute their UDP checksums themselves: with offload (a veth's default) a frame
        // leaves with the checksum still to be filled in, which only the kernel's own path does.
        await inNs(ns.a, ["ethtool", "-K", "hA", "tx", "off"]);
        await inNs(ns.b, ["ethtool", "-K", "hB", "tx", "off"]);
        ip("-n", ns.a, "addr", "add", "10.0.1.1/24", "dev", "hA");
        ip("-n", ns.b, "addr", "add", "10.0.2.2/24", "dev", "hB");
        ip("-n", ns.a, "neigh", "add", "10.0.1.254", "lladdr", "02:00:00:00:0a:fe", "dev", "hA", "nud", "permanent");
        ip("-n", ns.b, "neigh", "add", "10.0.2.254", "lladdr", "02:00:00:00:0b:fe", "dev", "hB", "nud", "permanent");
        ip("-n", ns.a, "route", "add", "default", "via", "10.0.1.254");
        ip("-n", ns.b, "route", "add", "default", "via", "10.0.2.254");
      });

      test("a bad interface name, or one carrying other frames, is one line and exit 2", async () => {
        // The two refusals side by side: each is a strata start (node, the description compiled), and nothing else.
        const [r, wrong] = await Promise.all([
          inNs(ns.e, serveCommand(backend, ["lanA:hostA=eA", "lanB:hostB=nosuch0"])),
          // An Ethernet interface for the ip network's external link, which carries raw IPv4.
          inNs(ns.e, serveCommand(backend, ["ip:netA=eA"])),
        ]);
        expect(r.status).toBe(2);
        expect(r.out).toMatch(
          /^strata: --port lanB:hostB=nosuch0: there is no interface 'nosuch0' \(interfaces: .*eA.*\)$/m,
        );
        expect(r.out).not.toMatch(/serving/);
        expect(wrong.status).toBe(2);
        expect(wrong.out).toMatch(
          new RegExp(
            [
              String.raw`^strata: --port ip:netA=eA: interface 'eA' carries ETHERNET frames and`,
              String.raw` network ip takes link type 101 \(bind an external link of a network`,
              String.raw` whose header the interface carries\)$`,
            ].join(""),
            "m",
          ),
        );
        expect(wrong.out).not.toMatch(/serving/);
      });

      test(
        "serves: ping and UDP cross the router with TTL − 1; a deleted forward " +
          "row stops them; a port survives its interface going down; Ctrl-C " +
          "writes the outputs",
        async () => {
          const s = await startServe(ns, backend, ["--commands", "--out", join(out, backend, "serve"), "--json"]);
          const { child, exited } = s;

          // A → B and B → A: every echo answered, the answer's TTL one less than the host's 64. The pings that expect
          // answers wait for them (ping's -w: until the count is answered, 20 s at most; -W alone waits only two round
          // trips for the last answer once one has come, which a busy machine overruns), and may send more echoes to
          // get them: that none was lost is strata's count at the end (nothing dropped but the five cut below, every
          // frame in one that left).
          for (const [from, to, count] of [
            [ns.a, "10.0.2.2", 3],
            [ns.b, "10.0.1.1", 2],
          ] as const) {
            const { out: said } = await inNs(from, answered(count, to));
            const { received, ttls } = answers(said);
            expect(received, said).toBeGreaterThanOrEqual(count);
            expect(new Set(ttls), said).toEqual(new Set(["ttl=63"]));
          }
          expect(await udpExchange(ns, "hello across r", 700, 20)).toBe("echo hello across r");

          // The row that forwards to 10.0.2.0/24, taken out between batches: nothing reaches B. The pings and tries
          // wait for no answer only briefly: that each was dropped for want of the row is strata's count (the
          // forward misses in the summary), and the row goes back once strata has counted all five dropped.
          const droppedBefore = await dropped(s);
          child.stdin?.write("delete ip:r forward 1\n");
          await waitFor(s, /^deleted ip\.r forward row 1 \(dst 10\.0\.2\.0\/24 → out 2\)$/m);
          const cut = await inNs(ns.a, ["ping", "-c", "2", "-i", "0.2", "-W", "0.3", "10.0.2.2"]);
          expect(cut.out).toMatch(/2 packets transmitted, 0 received/);
          expect(await udpExchange(ns, "lost", 250)).toBe("timeout");
          await until(
            async () => (await dropped(s)) >= droppedBefore + 5,
            () => `strata did not count the 5 frames dropped; stderr: ${s.stderr}`,
          );

          // Put back: through again.
          child.stdin?.write("insert ip:r forward 1\n");
          await waitFor(s, /^inserted ip\.r forward row 1/m);
          expect(answers((await inNs(ns.a, answered(1, "10.0.2.2"))).out).received).toBeGreaterThanOrEqual(1);

          // B's interface goes down: strata keeps running, says so, and opens that port again once it is up; A's port
          // stays open.
          ip("-n", ns.e, "link", "set", "eB", "down");
          await waitFor(
            s,
            /^strata: port lanB:hostB=eB: interface eB is down or gone: the port is closed until its interface is up$/m,
          );
          expect((await inNs(ns.a, ["ping", "-c", "1", "-W", "0.3", "10.0.2.2"])).out).toMatch(
            /1 packets transmitted, 0 received/,
          );
          ip("-n", ns.e, "link", "set", "eB", "up");
          await waitFor(s, /^port lanB:hostB=eB is open again$/m);
          expect(answers((await inNs(ns.a, answered(1, "10.0.2.2"))).out).received).toBeGreaterThanOrEqual(1);
          expect(s.stderr).not.toMatch(/lanA:hostA=eA.*(closed|open again)/);

          // Ctrl-C: a clean stop, exit 0, the summary on stdout and in --out.
          child.kill("SIGINT");
          expect(await exited).toBe(0);
          const summary = JSON.parse(s.stdout) as {
            inputs: { endpoint: string; file: string; packets: number; linkTypes: string[] }[];
            packets: { injected: number; dropped: number; exited: number };
            drops: Record<string, number>;
            ports: PortCounts[];
          };
          expect(summary.inputs.map((i) => [i.endpoint, i.file, i.linkTypes])).toEqual([
            ["lanA:hostA", "eA", ["ETHERNET"]],
            ["lanB:hostB", "eB", ["ETHERNET"]],
          ]);
          // Echo requests dropped while the row was out (2 pings, 3 UDP tries): a forward miss each.
          expect(summary.drops["forward-miss"]).toBe(5);
          expect(summary.packets.injected).toBe(summary.packets.dropped + summary.packets.exited);
          // Nothing was lost on the way in; what each port received is what entered there.
          expect(
            summary.ports.map((p) => [p.port, p.received, p.droppedByInterface, p.droppedByCapture, p.droppedByStrata]),
          ).toEqual([
            ["lanA:hostA=eA", summary.inputs[0]?.packets, 0, 0, 0],
            ["lanB:hostB=eB", summary.inputs[1]?.packets, 0, 0, 0],
          ]);
          expect(JSON.parse(readFileSync(join(out, backend, "serve", "summary.json"), "utf8"))).toEqual(summary);
          // The captures strata wrote: frames from A left toward B with TTL 63, and arrived from A with 64.
          const lanA = ttlsBySource(join(out, backend, "serve", "links", "lanA.hostA.pcap"));
          const lanB = ttlsBySource(join(out, backend, "serve", "links", "lanB.hostB.pcap"));
          expect(new Set(lanA.get("02:00:00:00:0a:01"))).toEqual(new Set([64]));
          expect(new Set(lanB.get("02:00:00:00:0b:fe"))).toEqual(new Set([63]));
          expect(new Set(lanB.get("02:00:00:00:0b:02"))).toEqual(new Set([64]));
          expect(new Set(lanA.get("02:00:00:00:0a:fe"))).toEqual(new Set([63]));
        },
      );
      test(
        "ports fail alone and count their losses: one interface flapping leaves " +
          "the other port's frames untouched; a port process stalled loses nothing its capture buffer holds, " +
          "and what the capture drops past that is in counts, the report and summary.json",
        async () => {
          const dir = join(out, backend, "independent");
          const s = await startServe(ns, backend, ["--commands", "--out", dir]);
          const portA = new RegExp(
            [
              String.raw`^ *port lanA:hostA=eA: ([\d,]+) received, 0 sent; dropped on the way`,
              String.raw` in: ([\d,]+) by the interface, ([\d,]+) by the capture, 0 by strata$`,
            ].join(""),
            "gm",
          );
          const numbers = (text: string): number[] =>
            [...text.matchAll(portA)]
              .at(-1)
              ?.slice(1)
              .map((n) => Number(n.replaceAll(",", ""))) ?? [];
          const answers = /^injected \d+, copies \d+, delivered (\d+),/gm;
          /** The command counts: packets delivered so far (to r: all that entered), and eA's port line's numbers. */
          const counts = async (): Promise<{ delivered: number; portA: number[] }> => {
            const before = [...s.stderr.matchAll(answers)].length;
            s.child.stdin?.write("counts\n");
            for (let i = 0; i < 500 && [...s.stderr.matchAll(answers)].length === before; i++) await sleep(10);
            await sleep(20); // the port lines follow
            return { delivered: Number([...s.stderr.matchAll(answers)].at(-1)?.[1]), portA: numbers(s.stderr) };
          };

          // eB goes down and up every 0.5 s while A sends to r over eA: eA's port never closes, and takes every frame.
          let sending = true;
          const flapping = (async () => {
            let flaps = 0;
            while (sending || flaps === 0) {
              ip("-n", ns.e, "link", "set", "eB", "down");
              await sleep(500);
              ip("-n", ns.e, "link", "set", "eB", "up");
              await sleep(500);
              flaps++;
            }
            return flaps;
          })();
          const first = await sendToR(ns, 1000, 1);
          sending = false;
          expect(await flapping).toBeGreaterThanOrEqual(1);
          expect(first).toBe(1000);
          expect(await counts()).toEqual({ delivered: first, portA: [first, 0, 0] });
          await waitFor(s, /^port lanB:hostB=eB is open again$/m);
          expect(s.stderr).toMatch(
            /^strata: port lanB:hostB=eB: interface eB is down or gone: the port is closed until its interface is up$/m,
          );
          expect(s.stderr).not.toMatch(/lanA:hostA=eA.*(closed|open again)/);

          // eA's port process stopped: it reads nothing, and its capture buffer holds what arrives meanwhile
          // (cap: 2,046 frames in 64 KB slots: 128 MB, captureBuffer in ports.ts; 62363b8's 8 MB held 128).
          const helper = portProcess(s.child.pid ?? -1, "eA");
          const stalled = async (count: number, perMs = 50): Promise<number> => {
            process.kill(helper, "SIGSTOP");
            try {
              return await sendToR(ns, count, perMs);
            } finally {
              process.kill(helper, "SIGCONT");
            }
          };
          /** The command counts once eA's port has passed on all it holds (two answers alike). */
          const settled = async (): Promise<{ delivered: number; portA: number[] }> => {
            let last = await counts();
            for (let i = 0; i < 50; i++) {
              await sleep(200);
              const now = await counts();
              if (JSON.stringify(now) === JSON.stringify(last)) return now;
              last = now;
            }
            return last;
          };
          const second = await stalled(1500);
          expect(second).toBe(1500);
          expect(await settled()).toEqual({ delivered: first + second, portA: [first + second, 0, 0] });

          // More than it holds: the capture drops the rest, and says so.
          const third = await stalled(overflow.count, overflow.perMs);
          const [received = 0, byInterface = 0, byCapture = 0] = (await settled()).portA;
          expect(byCapture).toBeGreaterThan(0);
          expect(received + byInterface + byCapture).toBe(first + second + third);

          // The report at the end says the same, and so does summary.json.
          s.child.kill("SIGINT");
          expect(await s.exited).toBe(0);
          expect(numbers(s.stdout)).toEqual([received, byInterface, byCapture]);
          const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as {
            delivered: Record<string, { packets: number }>;
            ports: PortCounts[];
          };
          expect(summary.ports[0]).toMatchObject({
            port: "lanA:hostA=eA",
            received,
            droppedByInterface: byInterface,
            droppedByCapture: byCapture,
            droppedByStrata: 0,
          });
          expect(summary.delivered["ip.r"]?.packets).toBe(received);
        },
      );
    });
  },
);
