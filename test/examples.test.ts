// Every example under examples/ is replayed and checked: where each packet
// went (its fate in the trace), the summary's counts, and every output capture
// byte for byte against the example's expected/ folder, and what strata trace
// shows of it against test/fixtures/golden/trace/.
// UPDATE_GOLDENS=1 rewrites expected/ and those from a run (then read them with tshark).

import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fate } from "../src/trace/words.js";
import { main } from "..//src/cli/main.js";
import { memoryIo } from "../src/cli/io.js";
import type { Summary } from "../src/engine/summary.js";
import type { TraceLine } from "../src/engine/trace.js";
import { REPLAY_EXAMPLES } from "./helpers/examples.js";

interface Example {
  summary: string;
  inputs: string[];
  expect: { packets: Summary["packets"]; fates: string[]; links: Record<string, number> };
}

const root = new URL("..", import.meta.url).pathname;
const examples = REPLAY_EXAMPLES;

function captures(dir: string): string[] {
  return ["links", "delivered"]
    .flatMap((sub) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).map((f) => `${sub}/${f}`) : []))
    .sort();
}

describe.each(examples)("example %s", (name) => {
  const dir = join(root, "examples", name);
  const example = JSON.parse(readFileSync(join(dir, "example.json"), "utf8")) as Example;

  it("replays to the expected outputs", async () => {
    const out = mkdtempSync(join(tmpdir(), `strata-${name}-`));
    try {
      const io = memoryIo();
      const args = [
        "run",
        join(dir, "network.yaml"),
        ...example.inputs.flatMap((i) => ["--in", i.replace("=pcaps/", `=${root}pcaps/`)]),
        "--out",
        out,
        "--trace",
      ];
      const code = await main(args, io);
      expect(io.stderr.text).toBe("");
      expect(code).toBe(0);

      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
      expect(summary.packets).toEqual(example.expect.packets);
      const { injected, copies, delivered, dropped, exited } = summary.packets;
      expect(delivered + dropped + exited).toBe(injected + copies); // every packet and copy has one fate
      expect(Object.fromEntries(Object.entries(summary.links).map(([k, v]) => [k, v.packets]))).toEqual(
        example.expect.links,
      );

      const lines = readFileSync(join(out, "trace.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as TraceLine);
      expect(lines.map((l) => fate(l.steps))).toEqual(example.expect.fates);
      // strata trace reads back every step the replay wrote, pushes, pops and hand-offs included:
      // the list, then each packet (found through trace.idx), as test/fixtures/golden/trace/ has them.
      let shownAll = "";
      for (const packet of [undefined, ...lines.map((l) => l.packet)]) {
        const shown = memoryIo();
        expect(await main(["trace", out, ...(packet === undefined ? [] : ["--packet", String(packet)])], shown)).toBe(
          0,
        );
        expect(shown.stderr.text).toBe("");
        shownAll += shown.stdout.text;
      }
      const traceGolden = join(root, "test/fixtures/golden/trace", `${name}.txt`);
      if (process.env.UPDATE_GOLDENS === "1") writeFileSync(traceGolden, shownAll);
      expect(shownAll).toBe(readFileSync(traceGolden, "utf8"));

      const golden = join(dir, "expected");
      if (process.env.UPDATE_GOLDENS === "1") {
        rmSync(golden, { recursive: true, force: true });
        for (const f of captures(out)) cpSync(join(out, f), join(golden, f));
      }
      // No marker: strata refuses expected/ as an --out like any directory it did not write.
      expect(existsSync(join(golden, ".strata-output"))).toBe(false);
      expect(captures(out)).toEqual(captures(golden));
      for (const f of captures(golden)) expect(readFileSync(join(out, f)), f).toEqual(readFileSync(join(golden, f)));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

// Seed §5.1.3, Bridging Closure: bridged networks are equivalent to one network.
// The bridged pair and the single merged LAN deliver the same packets to every host.
describe("bridged-lans", () => {
  const dir = join(root, "examples", "bridged-lans");
  const pcap = (f: string): string => join(root, "pcaps", f);
  const runOnce = async (spec: string, inputs: string[]): Promise<string> => {
    const out = mkdtempSync(join(tmpdir(), "strata-closure-"));
    const code = await main(["run", join(dir, spec), ...inputs.flatMap((i) => ["--in", i]), "--out", out], memoryIo());
    expect(code).toBe(0);
    return out;
  };

  it("delivers what the merged single LAN delivers", async () => {
    const bridged = await runOnce("network.yaml", [
      `lanA:h1.1=${pcap("example-hub-h1.pcap")}`,
      `lanB:h3.1=${pcap("example-hub-h3.pcap")}`,
    ]);
    const merged = await runOnce("merged.yaml", [
      `lan:h1.1=${pcap("example-hub-h1.pcap")}`,
      `lan:h3.1=${pcap("example-hub-h3.pcap")}`,
    ]);
    try {
      const hosts = { h1: "lanA", h2: "lanA", h3: "lanB", h4: "lanB" };
      for (const [host, net] of Object.entries(hosts)) {
        expect(readFileSync(join(bridged, "delivered", `${net}.${host}.pcap`)), host).toEqual(
          readFileSync(join(merged, "delivered", `lan.${host}.pcap`)),
        );
      }
      expect(readdirSync(join(bridged, "delivered")).length).toBe(readdirSync(join(merged, "delivered")).length);
    } finally {
      rmSync(bridged, { recursive: true, force: true });
      rmSync(merged, { recursive: true, force: true });
    }
  });
});

// examples/l2vpn is bridged-lans with the bridging trunk implemented by a GRE session at both
// ends (seed Figure 8): layering changes how the link is made, not what crosses it or arrives.
describe("l2vpn", () => {
  it("delivers what bridged-lans delivers, and its trunk carries the same frames", () => {
    const expected = (name: string, f: string): Buffer => readFileSync(join(root, "examples", name, "expected", f));
    const same = [
      "delivered/lanA.h1.pcap",
      "delivered/lanA.h2.pcap",
      "delivered/lanB.h3.pcap",
      "delivered/lanB.h4.pcap",
      "links/lanA.trunk.pcap",
    ];
    for (const f of same) expect(expected("l2vpn", f), f).toEqual(expected("bridged-lans", f));
    // The trunk's frames went through the tunnel, one GRE packet each.
    expect(captures(join(root, "examples", "l2vpn", "expected"))).toContain("links/wan.tunnel.pcap");
  });
});

// examples/ip-router-auto is examples/ip-router with every identifier left out (strata
// allocates them): the same packets on the same links, capture for capture, byte for byte.
describe("ip-router-auto", () => {
  it("replays to ip-router's captures: allocation changes no packet", () => {
    const expected = (name: string): string => join(root, "examples", name, "expected");
    const renamed: Record<string, string> = {
      "links/lanA.h1-r.pcap": "links/lanA.h1.1-r.1.pcap",
      "links/lanB.r-h2.pcap": "links/lanB.r.1-h2.1.pcap",
      "links/ip.h1-r.pcap": "links/ip.h1.1-r.1.pcap",
      "links/ip.r-h2.pcap": "links/ip.r.2-h2.1.pcap",
      "delivered/ip.h1.pcap": "delivered/ip.h1.pcap",
      "delivered/ip.h2.pcap": "delivered/ip.h2.pcap",
    };
    expect(captures(expected("ip-router-auto"))).toEqual(Object.keys(renamed).sort());
    expect(captures(expected("ip-router"))).toEqual(Object.values(renamed).sort());
    for (const [auto, plain] of Object.entries(renamed)) {
      expect(readFileSync(join(expected("ip-router-auto"), auto)), auto).toEqual(
        readFileSync(join(expected("ip-router"), plain)),
      );
    }
  });
});
