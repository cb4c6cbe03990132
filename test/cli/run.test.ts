// `strata run` and `strata trace` from the command line: bad input of every
// kind is one line on stderr and exit 2; good runs write what they promise.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import type { Summary } from "../../src/engine/summary.js";
import { TRACE_LARGE_BYTES, TRACE_LINE_MAX, type TraceLine } from "../../src/engine/trace.js";
import { largeTrace } from "../../src/cli/run.js";
import { showTrace } from "../../src/cli/trace.js";
import { InputError } from "../../src/errors.js";
import { pcapFile } from "../pcap/builders.js";

const root = new URL("../..", import.meta.url).pathname;
const REAL = join(root, "test/fixtures/pcaps-real");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const CHAIN = join(root, "examples/filter-chain/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");
const H3 = join(root, "pcaps/example-hub-h3.pcap");
const RING = join(root, "examples/one-way-ring/network.yaml");
const RING_IN = join(root, "pcaps/example-ring-m0.pcap");

// Outputs go to `dir`; descriptions written by a test go to `specs` (strata refuses an --out holding an input).
let dir = "";
let specs = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-run-"));
  specs = mkdtempSync(join(tmpdir(), "strata-run-specs-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(specs, { recursive: true, force: true });
});

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

function spec(text: string): string {
  const path = join(specs, "net.yaml");
  writeFileSync(path, text);
  return path;
}

describe("strata run: bad input is one line and exit 2", () => {
  it.each([
    {
      name: "an endpoint with no network and several networks",
      args: () => ["run", twoNets(), "--in", "h1.1=x.pcap", "--out", dir],
      error: /endpoint 'h1.1' names no network/,
    },
    {
      name: "an unknown network",
      args: () => ["run", HUB, "--in", "wan:h1.1=" + H1, "--out", dir],
      error: /there is no network 'wan' \(networks: lan\)/,
    },
    {
      name: "an unknown member",
      args: () => ["run", HUB, "--in", "lan:h9.1=" + H1, "--out", dir],
      error: /network lan has no member or external link 'h9'/,
    },
    {
      name: "a link the member does not send on",
      args: () => ["run", HUB, "--in", "lan:h1.7=" + H1, "--out", dir],
      error: /lan\.h1 sends on no link '7' \(it sends on 1 \(h1\.1-hub\.1\)\)/,
    },
    {
      name: "a link name the member does not send on",
      args: () => ["run", HUB, "--in", "lan:h1.h1-hub=" + H1, "--out", dir],
      error: /lan\.h1 sends on no link 'h1-hub' \(it sends on 1 \(h1\.1-hub\.1\)\)/,
    },
    {
      name: "a session without a send row",
      args: () => ["run", HUB, "--in", "lan:h1@3=" + H1, "--out", dir],
      error: /lan\.h1 has no send row for session '3' \(it has no send table\)/,
    },
    {
      name: "--in without a file",
      args: () => ["run", HUB, "--in", "lan:h1.1", "--out", dir],
      error: /--in 'lan:h1.1' must be ENDPOINT=FILE/,
    },
    {
      name: "a missing capture",
      args: () => ["run", HUB, "--in", "lan:h1.1=" + join(dir, "none.pcap"), "--out", dir],
      error: /none\.pcap/,
    },
    {
      name: "a capture of the wrong link type",
      args: () => ["run", HUB, "--in", `lan:h1.1=${join(REAL, "tcp-handshake-nano.pcap")}`, "--out", dir],
      error: new RegExp(
        [
          String.raw`link type LINUX_SLL \(113\) cannot enter lan:h1.1: that network's`,
          String.raw` header is ethernet \(give it a capture of ETHERNET`,
        ].join(""),
      ),
    },
    {
      name: "a bad hop limit",
      args: () => ["run", HUB, "--in", "lan:h1.1=" + H1, "--out", dir, "--hop-limit", "0"],
      error: /--hop-limit/,
    },
    {
      name: "a description with an error",
      args: () => [
        "run",
        spec("networks:\n  lan:\n    header: ethernet\n    members:\n      h1: { name: nope }\n"),
        "--in",
        "lan:h1=" + H1,
        "--out",
        dir,
      ],
      error: /net\.yaml: 5:\d+ networks\.lan\.members\.h1\.name/,
    },
    {
      name: "a missing --out",
      args: () => ["run", HUB, "--in", "lan:h1.1=" + H1],
      error: /required option '--out <dir>'/,
    },
  ])("$name", async ({ args, error }) => {
    const r = await strata(...args());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(error);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});

function twoNets(): string {
  return spec(`networks:
  a:
    header: ethernet
    members: { h1: { name: "02:00:00:00:00:01" }, h2: { name: "02:00:00:00:00:02" } }
    links: [ { from: h1.1, to: h2.1 } ]
  b:
    header: cna
    members: { h1: { name: 1 } }
`);
}

describe("strata run", () => {
  it("replays a damaged capture up to the damage, keeps the outputs, then reports it", async () => {
    const damaged = join(REAL, "pcapfix_test_damaged.pcap");
    const net = spec(`networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`);
    const r = await strata("run", net, "--in", `lan:a.1=${damaged}`, "--out", dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^strata: .*pcapfix_test_damaged\.pcap: byte 114: record says caplen 16896 but only 8756 bytes remain/,
    );
    const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as Summary;
    expect(summary.packets.injected).toBe(1);
    expect(summary.delivered["lan.b"]?.packets).toBe(1);
    expect(summary.error).toMatch(/byte 114/);
    expect(existsSync(join(dir, "delivered/lan.b.pcap"))).toBe(true);
  });

  it("merges several inputs in timestamp order", async () => {
    const r = await strata("run", HUB, "--in", `lan:h1.1=${H1}`, "--in", `lan:h3.1=${H3}`, "--out", dir, "--trace");
    expect(r.code).toBe(0);
    const lines = readFileSync(join(dir, "trace.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as TraceLine);
    expect(lines.map((l) => l.endpoint)).toEqual([
      "lan:h1.1",
      "lan:h1.1",
      "lan:h3.1",
      "lan:h1.1",
      "lan:h3.1",
      "lan:h1.1",
    ]);
    const times = lines.map((l) => BigInt(l.tsNs));
    expect([...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(times);
    expect(r.stdout).toMatch(
      /\noutputs in .*: summary\.json, links\/ \(\d+ recordings\), delivered\/ .*, trace\.jsonl\n$/,
    );
  });

  it("feeds an IPv4 network from a Linux cooked capture, taking the cooked header off", async () => {
    const net = spec(`networks:
  ip:
    header: ipv4
    members: { a: { name: 192.168.1.1 }, b: { name: 10.0.0.2 } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      b: { acquire: [ { match: { proto: 6 }, do: receive } ], receive: [ { do: deliver } ] }
`);
    const r = await strata(
      "run",
      net,
      "--in",
      `ip:a.1=${join(REAL, "tcp-handshake-nano.pcap")}`,
      "--out",
      dir,
      "--json",
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as Summary;
    expect(summary.inputs[0]).toMatchObject({ packets: 3, linkTypes: ["LINUX_SLL"], adapted: ["Linux cooked header"] });
    expect(summary.packets).toEqual({ injected: 3, copies: 0, delivered: 3, dropped: 0, exited: 0 });
    // The link's capture is raw IP: 16 bytes shorter than the cooked frames (76, 76, 68).
    const capture = readFileSync(join(dir, "links/ip.a.1-b.1.pcap"));
    expect(capture.readUInt32LE(20)).toBe(101);
    expect(capture.readUInt32LE(24 + 8)).toBe(60);
  });

  it("feeds a vxlan network from an Ethernet capture, taking Ethernet off as for IPv4", async () => {
    const net = spec(`networks:
  overlay:
    header: vxlan
    members: { a: { name: 192.168.203.1 }, b: { name: 192.168.202.1 } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      b: { acquire: [ { match: { dst: 192.168.202.1, vni: 100 }, do: receive } ], receive: [ { do: deliver } ] }
`);
    const r = await strata("run", net, "--in", `overlay:a.1=${join(root, "pcaps/vxlan.pcap")}`, "--out", dir, "--json");
    expect(r.stderr).toBe("");
    const summary = JSON.parse(r.stdout) as Summary;
    expect(summary.inputs[0]).toMatchObject({ packets: 10, linkTypes: ["ETHERNET"], adapted: ["Ethernet header"] });
    // Half the packets go to 192.168.202.1; the others miss b's acquire row.
    expect(summary.packets).toEqual({ injected: 10, copies: 0, delivered: 5, dropped: 5, exited: 0 });
  });

  it.each([
    { name: "USER1, the link type strata writes", linkType: 148 },
    { name: "LINKTYPE_MPLS (219)", linkType: 219 },
  ])("feeds an mpls network from a capture of $name", async ({ linkType }) => {
    const net = spec(`networks:
  mp:
    header: mpls
    members: { a: { name: 16001 }, b: { name: 16002 } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      b: { acquire: [ { match: { label: 16002 }, do: receive } ], receive: [ { do: deliver } ] }
`);
    const capture = join(specs, "mpls.pcap");
    writeFileSync(
      capture,
      pcapFile({ linkTypeField: linkType }, [{ data: Uint8Array.of(0x03, 0xe8, 0x21, 0x40, 0x45, 0, 0, 20) }]),
    );
    const r = await strata("run", net, "--in", `mp:a.1=${capture}`, "--out", dir, "--json");
    expect(r.stderr).toBe("");
    expect((JSON.parse(r.stdout) as Summary).packets.delivered).toBe(1);
    expect(readFileSync(join(dir, "delivered/mp.b.pcap")).readUInt32LE(20)).toBe(148);
  });

  it("sends in a session: the send table pushes the header", async () => {
    const net = spec(
      `networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      a:
        send: [ { session: 5, header: { dst: "02:00:00:00:00:02", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
      b: { acquire: [ { match: { dst: "02:00:00:00:00:02", type: 0x0800 }, do: receive } ], ` +
        `receive: [ { do: deliver } ] }
`,
    );
    const r = await strata(
      "run",
      net,
      "--in",
      `lan:a@5=${join(REAL, "LINKTYPE_RAW_ipv4.pcap")}`,
      "--out",
      dir,
      "--json",
    );
    expect(r.stderr).toBe("");
    expect((JSON.parse(r.stdout) as Summary).packets.delivered).toBe(1);
    const frame = readFileSync(join(dir, "delivered/lan.b.pcap")).subarray(24 + 16);
    expect(frame.subarray(0, 14).toString("hex")).toBe("020000000002" + "020000000001" + "0800");
    expect(frame[14]).toBe(0x45); // the raw IPv4 packet follows
  });

  it("prints a short report by default", async () => {
    const r = await strata(
      "run",
      CHAIN,
      "--in",
      `chain:m0.1=${join(root, "pcaps/example-chain-m0.pcap")}`,
      "--out",
      dir,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^replayed 5 packets through .*filter-chain\/network\.yaml in [\d.]+ ms/);
    expect(r.stdout).toMatch(/delivered +1 +chain\.m3 1/);
    expect(r.stdout).toMatch(/dropped +4 +receive-miss 2, forward-drop 1, ttl-expired 1/);
  });
});

describe("strata run: --hop-limit and --copy-limit are whole numbers within the data plane's bounds", () => {
  // --hop-limit on the one-way ring, whose looping packet crosses as many links as the limit allows
  // (the other four cross 1 to 4); --copy-limit on the hub, where h1's broadcast asks for 2 copies.
  const run = (flag: string, value: string): string[] =>
    flag === "--hop-limit"
      ? ["run", RING, "--in", `ring:m0=${RING_IN}`, "--out", dir, "--json", flag, value]
      : ["run", HUB, "--in", `lan:h1.1=${H1}`, "--out", dir, "--json", flag, value];
  const crossings = (s: Summary): number => Object.values(s.links).reduce((n, l) => n + l.packets, 0);
  it.each([
    { flag: "--hop-limit", value: "0", code: 2, stderr: "strata: --hop-limit 0 is too small (at least 1)\n" },
    { flag: "--hop-limit", value: "1", code: 0, check: (s: Summary) => expect(crossings(s)).toBe(5) },
    { flag: "--hop-limit", value: "1024", code: 0, check: (s: Summary) => expect(crossings(s)).toBe(10 + 1024) },
    { flag: "--hop-limit", value: "1025", code: 2, stderr: "strata: --hop-limit 1025 is too large (at most 1024)\n" },
    {
      flag: "--hop-limit",
      value: "2147483648",
      code: 2,
      stderr: "strata: --hop-limit 2147483648 is too large (at most 1024)\n",
    },
    {
      flag: "--hop-limit",
      value: "4294967297",
      code: 2,
      stderr: "strata: --hop-limit 4294967297 is too large (at most 1024)\n",
    },
    {
      flag: "--hop-limit",
      value: "1.5",
      code: 2,
      stderr: "strata: --hop-limit 1.5 is not a whole number (give 1 to 1024)\n",
    },
    {
      flag: "--hop-limit",
      value: "abc",
      code: 2,
      stderr: "strata: --hop-limit abc is not a whole number (give 1 to 1024)\n",
    },
    { flag: "--copy-limit", value: "0", code: 2, stderr: "strata: --copy-limit 0 is too small (at least 1)\n" },
    { flag: "--copy-limit", value: "1", code: 0, check: (s: Summary) => expect(s.drops["replication-limit"]).toBe(1) },
    {
      flag: "--copy-limit",
      value: "65534",
      code: 0,
      check: (s: Summary) => expect(s.drops["replication-limit"]).toBeUndefined(),
    },
    {
      flag: "--copy-limit",
      value: "65535",
      code: 2,
      stderr: "strata: --copy-limit 65535 is too large (at most 65534)\n",
    },
    {
      flag: "--copy-limit",
      value: "2147483648",
      code: 2,
      stderr: "strata: --copy-limit 2147483648 is too large (at most 65534)\n",
    },
    {
      flag: "--copy-limit",
      value: "4294967297",
      code: 2,
      stderr: "strata: --copy-limit 4294967297 is too large (at most 65534)\n",
    },
    {
      flag: "--copy-limit",
      value: "1.5",
      code: 2,
      stderr: "strata: --copy-limit 1.5 is not a whole number (give 1 to 65534)\n",
    },
    {
      flag: "--copy-limit",
      value: "abc",
      code: 2,
      stderr: "strata: --copy-limit abc is not a whole number (give 1 to 65534)\n",
    },
  ])("$flag $value: exit $code", async ({ flag, value, code, stderr, check }) => {
    const r = await strata(...run(flag, value));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code, stderr: stderr ?? "" });
    if (check !== undefined) check(JSON.parse(r.stdout) as Summary);
  });
});

describe("strata run --trace: a large trace gets a line saying what it cost", () => {
  const fix = "(--trace-packets RANGES traces only the packets named, e.g. --trace-packets 0-999)";
  it.each([
    { bytes: TRACE_LARGE_BYTES, packets: 92_421, line: undefined },
    {
      bytes: TRACE_LARGE_BYTES + 1,
      packets: 92_421,
      line: `out/trace.jsonl: 100 MB for 92,421 packets, 1,082 bytes a packet ${fix}`,
    },
    {
      bytes: 1_190_000_000,
      packets: 1_000_000,
      line: `out/trace.jsonl: 1.19 GB for 1,000,000 packets, 1,190 bytes a packet ${fix}`,
    },
  ])("$bytes bytes", ({ bytes, packets, line }) => {
    expect(largeTrace("out/trace.jsonl", { bytes, packets })).toBe(line);
  });
});

describe("strata trace", () => {
  it("lists every packet's fate, and one packet's every step", async () => {
    await strata("run", HUB, "--in", `lan:h1.1=${H1}`, "--out", dir, "--trace");
    const list = await strata("trace", dir);
    expect(list.stdout.split("\n")[1]).toBe(
      "packet 1  lan:h1.1  2025-06-15T15:06:40.001000000Z  42 bytes  " +
        "delivered to lan.h2; delivered to lan.h3; dropped at lan.h4 " +
        "(acquire-miss)",
    );
    const one = await strata("trace", dir, "--packet", "1");
    expect(one.stdout).toContain("[0] forward  lan.hub  in 1     row 4: in 1, dst ff:ff:ff:ff:ff:ff → out 2, 3, 4");
    expect(one.stdout).toContain("[2] fork     lan.hub: copy of [0] to out 4");
    expect(one.stdout).toContain("[2] drop     lan.h4: acquire-miss (in acquire)");
  });

  it("--trace-packets traces only the packets named; strata trace shows those, and says which it holds", async () => {
    const r = await strata(
      "run",
      HUB,
      "--in",
      `lan:h1.1=${H1}`,
      "--in",
      `lan:h3.1=${H3}`,
      "--out",
      dir,
      "--trace-packets",
      "1,4-",
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const list = await strata("trace", dir);
    expect(list.stdout.split("\n").map((l) => l.split("  ")[0])).toEqual(["packet 1", "packet 4", "packet 5", ""]);
    expect((await strata("trace", dir, "--packet", "4")).stdout).toMatch(/^packet 4 /);
    expect((await strata("trace", dir, "--packet", "2")).stderr).toBe(
      `strata: ${join(dir, "trace.jsonl")}: no packet 2 in the trace (it holds 3 packets, from 1 to 5)\n`,
    );
  });

  it.each([
    {
      args: ["--trace-packets", "5-3"],
      stderr: "strata: --trace-packets 5-3: 5-3 ends before it starts (write 3-5)\n",
    },
    {
      args: ["--trace-packets", "x"],
      stderr:
        "strata: --trace-packets x: 'x' is not a packet number or range (write " +
        "packet numbers as N, N-M or N-, joined by commas, e.g. " +
        "0-999,5000,10000-)\n",
    },
  ])("$args: exit 2, nothing written", async ({ args, stderr }) => {
    const out = join(dir, "out");
    expect(await strata("run", HUB, "--in", `lan:h1.1=${H1}`, "--out", out, ...args)).toEqual({
      code: 2,
      stdout: "",
      stderr,
    });
    expect(existsSync(out)).toBe(false);
  });

  it.each([
    {
      name: "no trace in the directory",
      args: (d: string) => ["trace", d],
      error: /trace\.jsonl: there is no trace here \(replay with `strata run … --trace` first\)/,
    },
    {
      name: "a packet beyond the trace",
      args: (d: string) => ["trace", d, "--packet", "99"],
      error: /no packet 99 in the trace/,
      traced: true,
    },
    { name: "a bad packet number", args: (d: string) => ["trace", d, "--packet", "-1"], error: /--packet/ },
  ])("$name: exit 2", async ({ args, error, traced }) => {
    if (traced === true) await strata("run", HUB, "--in", `lan:h1.1=${H1}`, "--out", dir, "--trace");
    const r = await strata(...args(dir));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(error);
  });
});

describe("strata trace: a trace.jsonl cut or edited by hand is one line and exit 2", () => {
  const good = {
    packet: 0,
    endpoint: "lan:h1.1",
    tsNs: "1750000000001000000",
    len: 42,
    steps: [{ copy: 0, step: "deliver", member: "lan.h2" }],
  };
  const line = (change: object): string => JSON.stringify({ ...good, ...change });
  const step = (change: object): string =>
    line({ steps: [{ copy: 0, step: "link", link: "lan.h1.1-hub.1", from: "lan.h1", hops: 1, ...change }] });
  it.each([
    { name: "steps is a number", text: line({ steps: 5 }), error: "line 1: steps must be a list of steps, got 5" },
    { name: "a null line", text: `${line({})}\nnull`, error: "line 2: null is not a trace line" },
    { name: "a list for a line", text: "[1,2]", error: "line 1: [1,2] is not a trace line" },
    {
      name: "a missing key",
      text: JSON.stringify({ packet: 0, endpoint: "lan:h1.1" }),
      error: "line 1: missing key 'tsNs'",
    },
    {
      name: "a packet number in a string",
      text: line({ packet: "0" }),
      error: `line 1: packet must be a packet number, 0 or more, got "0"`,
    },
    {
      name: "a time that is not digits",
      text: line({ tsNs: "soon" }),
      error: `line 1: tsNs must be nanoseconds as a string of digits, got "soon"`,
    },
    { name: "a null step", text: line({ steps: [null] }), error: "line 1: steps[0] must be an object" },
    {
      name: "a step without a copy",
      text: line({ steps: [{ step: "deliver", member: "lan.h2" }] }),
      error: "line 1: steps[0].copy must be a copy number, 0 or more, got undefined",
    },
    {
      name: "an unknown step",
      text: step({ step: "teleport" }),
      error:
        `line 1: steps[0].step must be one of inject, link, exit, fork, ` +
        `deliver, drop, acquire, forward, transmit, receive, send, push, pop, ` +
        `handoff, got "teleport"`,
    },
    {
      name: "a step missing a detail",
      text: line({ steps: [{ copy: 0, step: "drop", member: "lan.h4", stage: "acquire" }] }),
      error: "line 1: steps[0] (drop) is missing key 'reason'",
    },
    {
      name: "a detail of the wrong type",
      text: step({ hops: "two" }),
      error: `line 1: steps[0].hops must be a whole number, 0 or more, got "two"`,
    },
    {
      name: "a long bad value",
      text: line({ endpoint: 7, len: "x".repeat(100_000) }),
      error: "line 1: endpoint must be a string, got 7",
    },
    {
      name: "a long bad value, cut",
      text: line({ len: "x".repeat(100_000) }),
      error: `line 1: len must be a length in bytes, got "${"x".repeat(58)}…`,
    },
  ])("$name", async ({ text, error }) => {
    const file = join(dir, "trace.jsonl");
    writeFileSync(file, `${text}\n`);
    for (const args of [[], ["--packet", "3"]]) {
      const r = await strata("trace", dir, ...args);
      expect(r.code).toBe(2);
      expect(r.stderr.startsWith(`strata: ${file}: ${error}`), r.stderr).toBe(true);
      expect(r.stderr).toMatch(/ \(the file was cut or edited; replay again\)\n$/);
      expect(r.stderr.split("\n")).toHaveLength(2);
    }
  });

  // A good line padded with spaces (JSON allows them) to the limit, and to the limit + 1, between two good lines.
  const padded = (limit: number, pad: number): Buffer => {
    const text = line({});
    const head = `${line({ packet: 1 })}\n${text.slice(0, -1)}`;
    const tail = `}\n${line({ packet: 2 })}\n`;
    const bytes = Buffer.alloc(head.length + limit - text.length + pad + tail.length, " ");
    bytes.write(head, 0);
    bytes.write(tail, bytes.length - tail.length);
    return bytes;
  };

  it("a line of TRACE_LINE_MAX bytes reads", async () => {
    writeFileSync(join(dir, "trace.jsonl"), padded(TRACE_LINE_MAX, 0));
    expect(await strata("trace", dir)).toMatchObject({ code: 0, stderr: "" });
  });

  // Both sides of the bound, with and without --packet, at a bound of 4 KiB showTrace is given: the same reader
  // without writing and reading 64 MiB four times (~7 s of CPU). input-limits.test.ts has strata trace refuse a
  // line past 64 MiB.
  const LIMIT = 4096;
  it.each([
    { name: "a line of the limit's bytes reads", pad: 0, refused: "" },
    {
      name: "a line of the limit + 1 bytes is refused, the message naming it and the limit",
      pad: 1,
      refused: "line 2: longer than 4096 bytes, the most a trace line holds (the file was cut or edited; replay again)",
    },
  ])("$name", async ({ pad, refused }) => {
    const file = join(dir, "trace.jsonl");
    writeFileSync(file, padded(LIMIT, pad));
    for (const flags of [{}, { packet: 2 }]) {
      const io = memoryIo();
      const problem = await showTrace(dir, flags, io, LIMIT).then(
        () => "",
        (err: unknown) => (err instanceof InputError ? err.message : String(err)),
      );
      expect(problem).toBe(refused === "" ? "" : `${file}: ${refused}`);
      if (refused === "") expect(io.stdout.text).toContain("packet 2");
    }
  });

  it("a trace.jsonl that is a directory", async () => {
    mkdirSync(join(dir, "trace.jsonl"));
    const r = await strata("trace", dir);
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr:
        `strata: ${join(dir, "trace.jsonl")}: cannot read the trace: it is a directory (replay with ` +
        `\`strata run … --trace\` to write it again)\n`,
    });
  });

  it("a good line still reads", async () => {
    writeFileSync(join(dir, "trace.jsonl"), `${line({})}\n`);
    expect(await strata("trace", dir)).toEqual({
      code: 0,
      stderr: "",
      stdout: "packet 0  lan:h1.1  2025-06-15T15:06:40.001000000Z  42 bytes  delivered to lan.h2\n",
    });
  });
});

describe("strata run --out: strata deletes or replaces only files it wrote", () => {
  const hub = (out: string, input = H1, ...more: string[]): string[] => [
    "run",
    HUB,
    "--in",
    `lan:h1.1=${input}`,
    "--out",
    out,
    ...more,
  ];

  // The refusals every writer shares are in out-dir.test.ts.
  it.skipIf(process.getuid?.() === 0)(
    "a directory without write permission (root may write anywhere: skipped as root)",
    async () => {
      const locked = join(dir, "locked");
      mkdirSync(locked, { mode: 0o500 });
      const r = await strata(...hub(join(locked, "out")));
      expect(r).toMatchObject({ code: 2, stdout: "" });
      expect(r.stderr).toMatch(
        /locked\/out: cannot write in --out: permission denied \(choose a directory you can write to\)\n$/,
      );
    },
  );

  it("marks its outputs, and a later run replaces exactly those", async () => {
    expect((await strata(...hub(dir, H1, "--trace"))).code).toBe(0);
    const marker = readFileSync(join(dir, ".strata-output"), "utf8").split("\n");
    expect(marker[0]).toMatch(/^# strata run wrote the files below/);
    expect(
      marker
        .slice(1)
        .filter((l) => l !== "")
        .sort(),
    ).toEqual(
      [
        "delivered/lan.h2.pcap",
        "delivered/lan.h3.pcap",
        "delivered/lan.h4.pcap",
        ...["h1.1-hub.1", "h2.1-hub.2", "h3.1-hub.3", "h4.1-hub.4"].map((l) => `links/lan.${l}.pcap`),
        "summary.json",
        "trace.idx",
        "trace.jsonl",
      ].sort(),
    );
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, "links", "mine.pcap"), "mine");
    // Again without --trace: the old trace goes, the files strata did not write stay.
    expect((await strata(...hub(dir))).code).toBe(0);
    expect(existsSync(join(dir, "trace.jsonl"))).toBe(false);
    expect(existsSync(join(dir, "trace.idx"))).toBe(false);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(dir, "links", "mine.pcap"), "utf8")).toBe("mine");
    expect(readFileSync(join(dir, ".strata-output"), "utf8")).not.toMatch(/trace\.(jsonl|idx)/);
  });

  it("--force writes beside files strata did not write, and keeps them", async () => {
    writeFileSync(join(dir, "notes.txt"), "mine");
    const r = await strata(...hub(dir, H1, "--force"));
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(dir, ".strata-output"), "utf8")).toContain("summary.json");
    // Now a strata output: the next run needs no --force.
    expect((await strata(...hub(dir))).code).toBe(0);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
  });

  it("makes a new --out with its parents, and takes an empty one, or a symbolic link to one", async () => {
    expect((await strata(...hub(join(dir, "a", "b")))).code).toBe(0);
    expect(existsSync(join(dir, "a", "b", "summary.json"))).toBe(true);
    mkdirSync(join(dir, "empty"));
    expect((await strata(...hub(join(dir, "empty")))).code).toBe(0);
    mkdirSync(join(dir, "target"));
    symlinkSync(join(dir, "target"), join(dir, "alias"));
    expect((await strata(...hub(join(dir, "alias")))).code).toBe(0);
    expect(existsSync(join(dir, "target", "summary.json"))).toBe(true);
  });
});
