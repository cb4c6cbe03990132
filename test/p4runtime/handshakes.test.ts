// The TLS server under a flood of connections that never send a ClientHello (issue 35):
// beyond the cap on waiting handshakes the oldest waiting connection is closed at once, so a
// controller with a valid certificate still gets in and one already in keeps working; and a
// connection that says nothing is closed when its handshake deadline passes. Loopback only,
// a few hundred connections at most; the waits are for the connections' close events.

import { connect, type Socket } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import type { HandshakeLimits } from "../../src/p4runtime/handshakes.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { loadTls } from "../../src/p4runtime/tls.js";
import { Certificates, noOpenssl } from "./certificates.js";
import { Client } from "./client.js";

const SPEC = "examples/ip-router/network.yaml";

/** Silent connections: each connected, saying nothing; `closed` resolves when the server has closed `n` of them. */
class Flood {
  readonly sockets: Socket[] = [];
  closedCount = 0;
  #waiting: { n: number; resolve: () => void }[] = [];

  async open(port: number, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const s = connect(port, "127.0.0.1");
      s.on("error", () => {});
      s.on("close", () => {
        this.closedCount++;
        for (const w of this.#waiting.filter((x) => x.n <= this.closedCount)) w.resolve();
      });
      this.sockets.push(s);
      await new Promise<void>((resolve) => s.once("connect", resolve).once("close", resolve));
    }
  }

  closed(n: number): Promise<void> {
    return this.closedCount >= n ? Promise.resolve() : new Promise((resolve) => this.#waiting.push({ n, resolve }));
  }

  end(): void {
    for (const s of this.sockets) s.destroy();
  }
}

describe.skipIf(noOpenssl !== undefined)(
  `TLS handshakes under a flood${noOpenssl !== undefined ? ` (skipped: ${noOpenssl})` : ""}`,
  () => {
    const certificates = new Certificates();
    const mtls = (): grpc.ChannelCredentials =>
      grpc.credentials.createSsl(
        certificates.pem("ca.pem"),
        certificates.pem("client.key"),
        certificates.pem("client.pem"),
      );
    const cleanups: (() => unknown)[] = [];

    beforeAll(() => {
      certificates.make("ca");
      certificates.make("server", { ca: "ca" });
      certificates.make("client", { ca: "ca" });
    });
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });
    afterAll(() => certificates.remove());

    const start = async (handshakes: HandshakeLimits): Promise<P4RuntimeServer> => {
      const tls = loadTls({
        cert: certificates.at("server.pem"),
        key: certificates.at("server.key"),
        ca: certificates.at("ca.pem"),
      });
      const server = await P4RuntimeServer.start(EngineEmulation.local(compile(loadSpec(SPEC))), {
        address: "127.0.0.1:0",
        empty: true,
        tls,
        handshakes,
      });
      cleanups.push(() => server.close(0));
      return server;
    };
    const client = (server: P4RuntimeServer): Client => {
      const c = new Client(`127.0.0.1:${server.port}`, mtls());
      cleanups.push(() => c.close());
      return c;
    };

    it("beyond the cap the oldest silent connections close; a controller in stays, a new one gets in", async () => {
      const CAP = 32;
      const FLOOD = 200;
      const server = await start({ deadlineMs: 600_000, maxPending: CAP });
      const before = client(server);
      expect((await before.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");

      const flood = new Flood();
      cleanups.push(() => flood.end());
      await flood.open(server.port, FLOOD);
      await flood.closed(FLOOD - CAP);
      expect(server.handshakes.pending).toBe(CAP);
      expect(server.handshakes.closed).toEqual({ deadline: 0, room: FLOOD - CAP });

      // The controller that was in was never counted as waiting, and still answers on its connection.
      expect((await before.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");
      expect(server.handshakes.closed.room).toBe(FLOOD - CAP);
      // A new one takes the room of the oldest silent connection.
      const after = client(server);
      expect((await after.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");
      await flood.closed(FLOOD - CAP + 1);
      expect(server.handshakes.closed).toEqual({ deadline: 0, room: FLOOD - CAP + 1 });
      expect(server.handshakes.pending).toBe(CAP - 1);
    });

    it("a connection whose handshake is not done by the deadline is closed; a controller in stays", async () => {
      const SILENT = 20;
      const server = await start({ deadlineMs: 2000, maxPending: 1024 });
      const c = client(server);
      expect((await c.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");
      const flood = new Flood();
      cleanups.push(() => flood.end());
      await flood.open(server.port, SILENT);
      await flood.closed(SILENT);
      // The controller's connection, past its deadline too, was not closed by it.
      expect(server.handshakes).toEqual({ pending: 0, closed: { deadline: SILENT, room: 0 } });
      expect((await c.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");
      expect(server.handshakes.closed.deadline).toBe(SILENT);
    });

    it("a connection that sends its ClientHello a byte at a time is closed at the deadline all the same", async () => {
      const server = await start({ deadlineMs: 300, maxPending: 1024 });
      const flood = new Flood();
      cleanups.push(() => flood.end());
      await flood.open(server.port, 1);
      const slow = flood.sockets[0];
      // A TLS record header (handshake, TLS 1.0) that promises more bytes than ever come.
      const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
      let sent = 0;
      const drip = setInterval(() => slow?.write(hello.subarray(sent % hello.length, (sent++ % hello.length) + 1)), 20);
      cleanups.push(() => clearInterval(drip));
      await flood.closed(1);
      expect(server.handshakes.closed).toEqual({ deadline: 1, room: 0 });
    });

    it("a connection whose handshake fails no longer counts as waiting", async () => {
      const server = await start({ deadlineMs: 600_000, maxPending: 1024 });
      const flood = new Flood();
      cleanups.push(() => flood.end());
      await flood.open(server.port, 1);
      flood.sockets[0]?.write("GET / HTTP/1.1\r\n\r\n");
      await flood.closed(1);
      // The client saw its close; the server's side of it may come a turn later.
      for (let i = 0; i < 100 && server.handshakes.pending > 0; i++) await new Promise((r) => setImmediate(r));
      expect(server.handshakes).toEqual({ pending: 0, closed: { deadline: 0, room: 0 } });
    });
  },
);
