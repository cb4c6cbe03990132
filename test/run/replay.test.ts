// A replay sizes its buffers by the packets it reads, never by a capture's
// snaplen (a header field readers ignore): any snaplen gives the same fates and
// outputs, packet buffers grow for long packets, and a packet longer than any
// buffer may be is dropped as too-long, counted.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { LINKTYPE, MAX_CAP_LEN_DEFAULT, openCapture } from "../../src/pcap/index.js";
import type { Summary } from "../../src/engine/summary.js";
import { concat, drain, payload, pcapFile } from "../pcap/builders.js";
import { REAL_DIR } from "../pcap/real-files.js";

const root = new URL("../..", import.meta.url).pathname;

// Ethernet: a.1 → b.1, b takes every frame. IPv4: a → m → b, m forwards everything (TTL decrement: a write).
const SPECS = {
  ethernet:
    `networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.1, to: b.1 } ]
    tables:
      a: { send: [ { session: 5, header: { dst: "02:00:00:00:00:02", type: 0x88b5 } } ], forward: [ { in: self, ` +
    `out: 1 } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`,
  ipv4: `networks:
  ip:
    header: ipv4
    ttl: decrement
    members: { a: { name: 10.0.0.1 }, m: { name: 10.0.0.2, role: infra }, b: { name: 10.0.0.3 } }
    links: [ { from: a.1, to: m.1 }, { from: m.2, to: b.1 } ]
    tables:
      m: { acquire: [ { do: forward } ], forward: [ { out: 2 } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`,
};

let dir = "";
const spec = (name: keyof typeof SPECS): string => join(dir, `${name}.yaml`);
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-replay-"));
  for (const [name, text] of Object.entries(SPECS)) writeFileSync(join(dir, `${name}.yaml`), text);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** An Ethernet frame holding an IPv4/UDP packet of `ipLen` bytes from 10.0.0.1 to 10.0.0.3, TTL 64. */
function ipv4Frame(ipLen: number, seed: number): Uint8Array {
  const ip = concat(
    Uint8Array.of(0x45, 0, ipLen >> 8, ipLen & 0xff, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 3),
    payload(ipLen - 20, seed),
  );
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += ((ip[i] ?? 0) << 8) | (ip[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  ip[10] = (~sum >> 8) & 0xff;
  ip[11] = ~sum & 0xff;
  return concat(Uint8Array.of(2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00), ip);
}

/** 300 small packets (more than a batch), then long ones up to IPv4's 65535 bytes, then small ones again. */
function longIpv4(): Uint8Array {
  const lens = [...Array.from({ length: 300 }, (_, i) => 46 + ((i * 37) % 1455)), 9000, 20000, 60000, 65535, 100, 1500];
  return pcapFile(
    {},
    lens.map((len, i) => ({ sec: 1_700_000_000 + i, data: ipv4Frame(len, i) })),
  );
}

async function run(
  specFile: string,
  input: string,
): Promise<{ code: number; stderr: string; summary: Summary; outputs: Map<string, Buffer> }> {
  const out = mkdtempSync(join(dir, "out-"));
  const io = memoryIo();
  const code = await main(["run", specFile, "--in", input, "--out", out], io);
  const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
  const outputs = new Map<string, Buffer>();
  for (const sub of ["links", "delivered"])
    for (const f of readdirSync(join(out, sub))) outputs.set(`${sub}/${f}`, readFileSync(join(out, sub, f)));
  return { code, stderr: io.stderr.text, summary, outputs };
}

/** The summary without what changes from run to run (time) or names the file. */
function fates(s: Summary): unknown {
  return { ...s, elapsedSeconds: 0, packetsPerSecond: 0, inputs: s.inputs.map((i) => ({ ...i, file: "" })) };
}

/** A copy of `bytes` whose pcap file header says snaplen `snapLen`. */
function withSnapLen(bytes: Buffer, snapLen: number): Buffer {
  const patched = Buffer.from(bytes);
  const le = patched.readUInt32LE(0) === 0xa1b2c3d4 || patched.readUInt32LE(0) === 0xa1b23c4d;
  if (le) patched.writeUInt32LE(snapLen, 16);
  else patched.writeUInt32BE(snapLen, 16);
  return patched;
}

const CAPTURES = [
  {
    name: "example-hub-h1.pcap",
    spec: () => join(root, "examples/hub-and-spoke/network.yaml"),
    endpoint: "lan:h1.1",
    delivered: 4,
    bytes: () => readFileSync(join(root, "pcaps/example-hub-h1.pcap")),
  },
  {
    name: "various_gre.pcap",
    spec: () => spec("ethernet"),
    endpoint: "lan:a.1",
    delivered: 100,
    bytes: () => readFileSync(join(REAL_DIR, "various_gre.pcap")),
  },
  {
    name: "long IPv4 packets, TTL written",
    spec: () => spec("ipv4"),
    endpoint: "ip:a.1",
    delivered: 306,
    bytes: () => Buffer.from(longIpv4()),
  },
];
const SNAPLENS = [0, 1, 64, 65535, 0x10000000, 0x7fffffff, 0x80000000, 0xffffffff];

describe.each(CAPTURES)(
  "a capture's snaplen sizes nothing: $name",
  ({ name, spec: specFile, endpoint, delivered, bytes }) => {
    let original: Awaited<ReturnType<typeof run>>;
    let file = "";
    beforeAll(async () => {
      file = join(dir, name.replace(/\W+/g, "-"));
      writeFileSync(file, bytes());
      original = await run(specFile(), `${endpoint}=${file}`);
      expect(original.code).toBe(0);
      expect(original.summary.packets.delivered).toBe(delivered);
    });

    it.each(SNAPLENS)("snaplen %d: the same fates, counts and outputs", async (snapLen) => {
      const patched = `${file}-snaplen-${snapLen}`;
      writeFileSync(patched, withSnapLen(readFileSync(file), snapLen));
      // The reader keeps the header's value and allocates nothing from it.
      const read = drain(openCapture(patched));
      expect(read.reader?.interfaces[0]?.snapLen).toBe(snapLen);
      expect(read.packets).toEqual(drain(openCapture(file)).packets);

      const r = await run(specFile(), `${endpoint}=${patched}`);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(fates(r.summary)).toEqual(fates(original.summary));
      expect([...r.outputs.keys()]).toEqual([...original.outputs.keys()]);
      for (const [f, data] of original.outputs) expect(r.outputs.get(f)?.equals(data), f).toBe(true);
    });
  },
);

describe("packet buffers grow with the packets, up to the longest a capture may hold", () => {
  // Payloads sent by a in session 5: the send table pushes a 14-byte Ethernet header, a write
  // into a packet buffer. A USBPcap capture may hold packets up to 1 MiB, more than any buffer.
  it.each([
    { name: "short ones", lens: [60, 1500, 9000], delivered: [60, 1500, 9000] },
    { name: "longer than the first buffers (16 KiB)", lens: [1000, 20000, 1000], delivered: [1000, 20000, 1000] },
    {
      name: "a long one after a batch of short ones",
      lens: [...Array<number>(300).fill(64), 200000, 64],
      delivered: [...Array<number>(300).fill(64), 200000, 64],
    },
    { name: "the longest a buffer holds", lens: [MAX_CAP_LEN_DEFAULT - 14], delivered: [MAX_CAP_LEN_DEFAULT - 14] },
    {
      name: "longer than any buffer: too-long",
      lens: [1000, MAX_CAP_LEN_DEFAULT + 1, 300000, 1000],
      delivered: [1000, 1000],
    },
  ])("$name", async ({ lens, delivered }) => {
    const file = join(dir, "payloads.pcap");
    writeFileSync(
      file,
      pcapFile(
        { linkTypeField: LINKTYPE.USBPCAP },
        lens.map((len, i) => ({ sec: 1_700_000_000 + i, data: payload(len, i) })),
      ),
    );
    const r = await run(spec("ethernet"), `lan:a@5=${file}`);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const tooLong = lens.length - delivered.length;
    expect(r.summary.packets).toEqual({
      injected: lens.length,
      copies: 0,
      delivered: delivered.length,
      dropped: tooLong,
      exited: 0,
    });
    expect(r.summary.drops).toEqual(tooLong > 0 ? { "too-long": tooLong } : {});
    // Every delivered frame is whole in the link's and b's captures: the header and the payload.
    for (const f of ["links/lan.a.1-b.1.pcap", "delivered/lan.b.pcap"]) {
      const path = join(dir, "capture.pcap");
      writeFileSync(path, r.outputs.get(f) ?? Buffer.alloc(0));
      const read = drain(openCapture(path));
      expect(read.error, f).toBeUndefined();
      expect(
        read.packets.map((p) => p.capLen),
        f,
      ).toEqual(delivered.map((len) => len + 14));
    }
  });
});
