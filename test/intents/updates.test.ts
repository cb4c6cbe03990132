// Routes moved by `strata run --updates`: a diamond h1 - r1 - {r2 | r3} - r4 - h2,
// the way through r2 the cheaper. A packet before r1-r2 goes down crosses it; one
// after crosses r1-r3 (the routes went round, between two packets); one after it
// comes back up crosses r1-r2 again; all three are delivered, and `strata trace`
// shows the intent beside the rows of the route that moved.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import type { Summary } from "../../src/engine/summary.js";
import { pcapFile } from "../pcap/builders.js";
import { ethernetFrame, ipv4Packet } from "../pipeline/helpers/packets.js";

const dir = mkdtempSync(join(tmpdir(), "strata-intents-updates-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DIAMOND = `networks:
  ip:
    header: ipv4
    ttl: decrement
    members:
      h1: { name: 10.0.1.1 }
      h2: { name: 10.0.2.1 }
      r1: { name: 10.0.0.1, role: infra }
      r2: { name: 10.0.0.2, role: infra }
      r3: { name: 10.0.0.3, role: infra }
      r4: { name: 10.0.0.4, role: infra }
    links:
      - { from: h1, to: r1, mode: two-way }
      - { from: r1, to: r2, mode: two-way }
      - { from: r1, to: r3, mode: two-way }
      - { from: r2, to: r4, mode: two-way }
      - { from: r3, to: r4, mode: two-way }
      - { from: r4, to: h2, mode: two-way }
    routes:
      costs: { r1-r3: 5 }
    demands: [ { from: h1, to: h2 } ]
`;

const T0 = 1_700_000_000;
const UPDATES = `- { at: ${T0 + 1}, down: { link: ip.r1-r2 } }
- { at: ${T0 + 3}, up: { link: ip.r1-r2 } }
`;

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

describe("strata run --updates on routes", () => {
  test("the routes go round a link down and come back when it is up", async () => {
    writeFileSync(join(dir, "net.yaml"), DIAMOND);
    writeFileSync(join(dir, "updates.yaml"), UPDATES);
    const packet = ethernetFrame({ type: 0x0800, payload: ipv4Packet({ src: 0x0a000101n, dst: 0x0a000201n }) });
    writeFileSync(
      join(dir, "h1.pcap"),
      pcapFile(
        {},
        [0, 2, 4].map((s) => ({ sec: T0 + s, frac: 0, data: packet })),
      ),
    );
    const out = join(dir, "out");
    const r = await strata(
      "run",
      join(dir, "net.yaml"),
      "--in",
      `ip:h1=${join(dir, "h1.pcap")}`,
      "--updates",
      join(dir, "updates.yaml"),
      "--out",
      out,
      "--trace",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    expect(summary.packets.delivered).toBe(3);
    const links = Object.fromEntries(Object.entries(summary.links).map(([k, v]) => [k, v.packets]));
    expect(links).toMatchObject({ "ip.r1-r2": 2, "ip.r1-r3": 1, "ip.r3-r4": 1, "ip.r2-r4": 2 });
    const second = await strata("trace", out, "--packet", "1");
    expect(second.stdout).toContain("[0] forward  ip.r1  in 1     row 2: dst 10.0.2.1/32 → out 3  (routes: h2)");
    expect(second.stdout).toContain("→ delivered to ip.h2");
  });
});
