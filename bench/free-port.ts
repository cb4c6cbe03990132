// Ports for the servers the benches and tests start themselves (simple_switch's Thrift and gRPC ports, Redis), which
// take a port number, not a listening socket. A port the kernel gives to bind(0) lies in its ephemeral range, and once
// closed again the kernel hands it to the next bind(0) or to a client connection's local end (the tests make
// thousands): in the time a simple_switch took to start, another switch's Thrift server took its gRPC port, and a
// deploy, or simple_switch_CLI's entries, went to the wrong switch (seen as a deploy that "failed to connect" and as
// switches that sent nothing). So ports are taken below that range, where the kernel hands out none, each process
// from a block of its own (vitest's worker number, else its pid), in turn, skipping any port something listens on.

import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Ports in a process's block: enough for every server a test file starts. */
const BLOCK = 1_000;

/** The kernel's ephemeral range's first port (Linux's default where /proc does not say). */
function ephemeralFrom(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Where this process's block starts, and how many blocks there are below the ephemeral range (0: none fits). */
function block(): { readonly base: number; readonly blocks: number } {
  const low = 10_000;
  const blocks = Math.floor((ephemeralFrom() - low) / BLOCK);
  const id = Number(process.env.VITEST_POOL_ID ?? process.pid);
  return { base: low + ((Number.isInteger(id) ? id : process.pid) % Math.max(blocks, 1)) * BLOCK, blocks };
}

let taken: { readonly base: number; readonly blocks: number } | undefined;
/** The next port to try in the block: where a process starts in it is random, then in turn. */
let next = Math.floor(Math.random() * BLOCK);

/** Listens on `port` (0: one the kernel picks) on loopback and closes again: the port, or undefined if in use. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => {
      const address = server.address();
      const got = typeof address === "object" && address !== null ? address.port : undefined;
      server.close(() => resolve(got));
    });
  });
}

/** A loopback TCP port nothing listens on now, for a server to be started on it. */
export async function freePort(): Promise<number> {
  taken ??= block();
  if (taken.blocks > 0)
    for (let tries = 0; tries < BLOCK; tries++) {
      const port = taken.base + (next++ % BLOCK);
      if ((await tryListen(port)) !== undefined) return port;
    }
  // No room below the ephemeral range, or every port of the block in use: one the kernel picks.
  const port = await tryListen(0);
  if (port === undefined) throw new Error("no free loopback port");
  return port;
}
