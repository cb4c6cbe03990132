// The tunnel examples against the real captures they replay: what strata
// delivers is what the capture carries inside its tunnels, byte for byte. The
// inner packets are cut out here by plain offset arithmetic (Ethernet, the
// IPv4 header by IHL, UDP + VXLAN or GRE + Cisco MetaData), never by the code
// under test.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { openCaptureBytes } from "../../src/pcap/reader.js";
import type { Summary } from "../../src/engine/summary.js";

const root = new URL("../..", import.meta.url).pathname;

interface Frame {
  readonly bytes: Uint8Array;
  readonly origLen: number;
}

function frames(file: string): Frame[] {
  const out: Frame[] = [];
  for (const b of openCaptureBytes(readFileSync(file), file).batches()) {
    for (let i = 0; i < b.count; i++) {
      const at = b.offset[i] ?? 0;
      out.push({ bytes: b.data.slice(at, at + (b.capLen[i] ?? 0)), origLen: b.origLen[i] ?? 0 });
    }
  }
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const u16 = (b: Uint8Array, at: number): number => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const ihl = (b: Uint8Array, at: number): number => ((b[at] ?? 0) & 0x0f) * 4;

/** Replays `inputs` through an example's description; the output directory and summary. */
async function replay(example: string, inputs: readonly string[]): Promise<{ out: string; summary: Summary }> {
  const out = mkdtempSync(join(tmpdir(), `strata-${example}-`));
  const io = memoryIo();
  const code = await main(
    [
      "run",
      join(root, "examples", example, "network.yaml"),
      ...inputs.flatMap((i) => ["--in", i.replace("=", `=${root}`)]),
      "--out",
      out,
    ],
    io,
  );
  expect(io.stderr.text).toBe("");
  expect(code).toBe(0);
  return { out, summary: JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary };
}

describe("example vxlan, the real vxlan.pcap replayed into the underlay", () => {
  const ETHERNET = 14;
  const UDP_AND_VXLAN = 8 + 8;
  const VTEP_B = "c0a8ca01"; // 192.168.202.1
  const captured = frames(join(root, "pcaps/vxlan.pcap"));
  /** The tenant frame inside each captured packet, and whether it went to b's VTEP. */
  const inner = captured.map(({ bytes, origLen }) => {
    const at = ETHERNET + ihl(bytes, ETHERNET) + UDP_AND_VXLAN;
    return {
      bytes: bytes.slice(at),
      origLen: origLen - at,
      toB: hex(bytes.subarray(ETHERNET + 16, ETHERNET + 20)) === VTEP_B,
    };
  });
  let run: { out: string; summary: Summary };
  beforeAll(async () => {
    run = await replay("vxlan", ["lan:tap=pcaps/vxlan.pcap"]);
  });
  afterAll(() => rmSync(run.out, { recursive: true, force: true }));

  it("delivers every inner frame, to the tenant host behind the VTEP it was sent to", () => {
    expect(captured).toHaveLength(10);
    expect(run.summary.packets).toEqual({ injected: 10, copies: 0, delivered: 10, dropped: 0, exited: 0 });
    const at = (member: string): Frame[] => frames(join(run.out, "delivered", `tenant.${member}.pcap`));
    const want = (toB: boolean): string[] => inner.filter((f) => f.toB === toB).map((f) => hex(f.bytes));
    expect(at("vm5").map((f) => hex(f.bytes))).toEqual(want(true));
    expect(at("vm3").map((f) => hex(f.bytes))).toEqual(want(false));
    expect([...at("vm5"), ...at("vm3")].map((f) => f.origLen).sort()).toEqual(inner.map((f) => f.origLen).sort());
  });
});

describe("example gre, the real various_gre.pcap replayed into the routers' switch", () => {
  const ETHERNET_TAGGED = 18;
  const GRE_KEYED = 8;
  const CMD = 8;
  const R6 = "aabbcc000100";
  const R7 = "aabbcc000200";
  const captured = frames(join(root, "pcaps/various_gre.pcap"));
  const isGre = (b: Uint8Array): boolean =>
    u16(b, 12) === 0x8100 && u16(b, 16) === 0x0800 && b[ETHERNET_TAGGED + 9] === 47;
  /** The IPv4 packet under GRE and the Cisco MetaData shim. */
  const underCmd = (b: Uint8Array): Uint8Array => b.slice(ETHERNET_TAGGED + ihl(b, ETHERNET_TAGGED) + GRE_KEYED + CMD);
  const greType = (b: Uint8Array): number => u16(b, ETHERNET_TAGGED + ihl(b, ETHERNET_TAGGED) + 2);
  let run: { out: string; summary: Summary };
  beforeAll(async () => {
    run = await replay("gre", ["lan:tap=pcaps/various_gre.pcap"]);
  });
  afterAll(() => rmSync(run.out, { recursive: true, force: true }));

  it("delivers the IPv4 packets inside the tunnel (pings, PIM) to the router they were sent to", () => {
    for (const [member, mac] of [
      ["r6", R6],
      ["r7", R7],
    ] as const) {
      const want = captured
        .map((f) => f.bytes)
        .filter((b) => isGre(b) && greType(b) === 0x8909 && hex(b.subarray(0, 6)) === mac && underCmd(b)[9] !== 47)
        .map((b) => hex(underCmd(b)));
      expect(want.length).toBe(6);
      expect(frames(join(run.out, "delivered", `tunnel.${member}.pcap`)).map((f) => hex(f.bytes))).toEqual(want);
    }
  });

  it("forwards each keepalive's inner packet back natively: the frame the capture shows next, byte for byte", () => {
    for (const [member, mac] of [
      ["r6", R6],
      ["r7", R7],
    ] as const) {
      // Keepalive replies the router sent: GRE type 0 from its MAC (frames 12, 42, 65, 88 for r6).
      const replies = captured
        .map((f) => f.bytes)
        .filter((b) => isGre(b) && greType(b) === 0 && hex(b.subarray(6, 12)) === mac);
      expect(replies.length).toBe(4);
      const link = frames(join(run.out, "links", `lan.${member}.1-sw.${member === "r6" ? 1 : 2}.pcap`));
      const sent = link.map((f) => f.bytes).filter((b) => hex(b.subarray(6, 12)) === mac);
      expect(sent.map(hex)).toEqual(replies.map(hex));
    }
  });

  it("drops every frame that is not GRE on VLAN 1213 at the switch, by its forward row", () => {
    const other = captured.filter((f) => !isGre(f.bytes)).length;
    expect(other).toBe(70);
    expect(run.summary.members["lan.sw"]?.drops).toEqual({ "forward-drop": other });
    expect(run.summary.packets).toEqual({ injected: 100, copies: 0, delivered: 30, dropped: 70, exited: 0 });
  });
});
