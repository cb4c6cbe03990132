// What the deploy tests share: strata's own P4Runtime server on a description, started empty on
// a free loopback port (as `strata p4runtime --empty` starts it) and stopped; `strata deploy` run
// in-process; and a device's entities read with the tests' own client (test/p4runtime/client.ts,
// which shares nothing with src/), each put in one canonical text so that two sets compare.

import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { Client, type M, ROOT } from "../p4runtime/client.js";

export const REPO = new URL("../..", import.meta.url).pathname;

export interface Served {
  readonly port: number;
  readonly address: string;
  readonly warnings: string[];
  close(): Promise<void>;
}

/** `strata p4runtime SPEC --empty --listen 127.0.0.1:PORT` in this process (PORT 0: a free one). */
export async function serveEmpty(spec: string, port = 0): Promise<Served> {
  const emulation = EngineEmulation.local(compile(loadSpec(spec)), false);
  const warnings: string[] = [];
  const server = await P4RuntimeServer.start(emulation, {
    address: `127.0.0.1:${port}`,
    empty: true,
    warn: (line) => warnings.push(line),
  });
  return {
    port: server.port,
    address: `127.0.0.1:${server.port}`,
    warnings,
    close: async () => {
      await server.close(0);
      emulation.close();
    },
  };
}

/** `strata deploy ARGS` in this process: its exit code, stdout and stderr. */
export async function deploy(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo();
  const code = await main(["deploy", ...args], io);
  return { code, out: io.stdout.text, err: io.stderr.text };
}

const Entity = ROOT.lookupType("p4.v1.Entity");

/** An entity as one text: the official definitions' JSON of it, replicas and group members in order. */
export function canonical(e: M): string {
  const o = Entity.toObject(Entity.fromObject(e), { longs: String, bytes: String, enums: String }) as M;
  const pre = o.packetReplicationEngineEntry as M | undefined;
  const group = (pre?.multicastGroupEntry ?? pre?.cloneSessionEntry) as M | undefined;
  if (group?.replicas !== undefined)
    (group.replicas as M[]).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  return JSON.stringify(o);
}

/**
 * Every entity of the kinds an export writes that a device holds: its table entries, the
 * default entries of `keyless` tables, each profile's members and groups, multicast groups and
 * clone sessions; sorted canonical texts.
 */
export async function held(
  address: string,
  deviceId: number,
  keyless: readonly number[],
  profiles: readonly number[],
): Promise<string[]> {
  const client = new Client(address);
  try {
    const d = String(deviceId);
    const entities = [
      { tableEntry: {} },
      ...keyless.map((tableId) => ({ tableEntry: { tableId, isDefaultAction: true } })),
      ...profiles.flatMap((actionProfileId) => [
        { actionProfileMember: { actionProfileId } },
        { actionProfileGroup: { actionProfileId } },
      ]),
      { packetReplicationEngineEntry: { multicastGroupEntry: {} } },
      { packetReplicationEngineEntry: { cloneSessionEntry: {} } },
    ];
    const read = await Promise.all(entities.map((e) => client.read({ deviceId: d, entities: [e] })));
    return read.flat().map(canonical).sort();
  } finally {
    client.close();
  }
}

export const spec = (name: string): string => join(REPO, "examples", name, "network.yaml");

/** A TCP relay to a port on loopback, that can be stopped (its connections cut) and started again on its own port. */
export class Relay {
  port = 0;
  readonly #to: number;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  constructor(to: number) {
    this.#to = to;
  }

  async start(): Promise<void> {
    const server = createServer((a) => {
      const b = connect(this.#to, "127.0.0.1");
      for (const s of [a, b]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => {
          a.destroy();
          b.destroy();
        });
      }
      a.pipe(b).pipe(a);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
