// freePort, for the servers the tests start on a port number (simple_switch, Redis): never a port the kernel hands to
// bind(0) or to a client's local end (its ephemeral range), never one something listens on, never the same twice in a
// row within a process.

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.js";

const ephemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
const held: Server[] = [];
afterAll(() => held.forEach((s) => s.close()));

const listen = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(port, "127.0.0.1", () => resolve(s));
  });

describe.skipIf(!(ephemeral > 11_000))("freePort", () => {
  it.each([
    ["below the ephemeral range, each port once", 20],
    ["many in a row stay distinct", 200],
  ])("%s (%i ports)", async (_, n) => {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(n);
    for (const p of ports) expect(p).toBeLessThan(ephemeral);
  });

  it("skips a port something listens on", async () => {
    const first = await freePort();
    // The next ports of the block, taken by servers of this test: freePort goes past them.
    for (let p = first + 1; p <= first + 3; p++) held.push(await listen(p));
    const next = await freePort();
    expect(next).not.toBe(first + 1);
    expect([first + 2, first + 3]).not.toContain(next);
    expect(next).toBeLessThan(ephemeral);
  });
});
