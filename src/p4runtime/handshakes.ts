// The P4Runtime server's TLS listener: strata accepts the connections and runs their TLS
// handshakes itself, and hands gRPC only those that completed one (with --tls-ca: with a
// client certificate the CA signed). gRPC's own TLS server gives a connection 120 s to say
// anything and takes any number of them, so ~20,000 silent connections used up the process's
// file descriptors and a controller with a valid certificate was refused. Here a connection
// that has not completed its handshake within HANDSHAKE_DEADLINE_MS is closed, and at most
// MAX_PENDING_HANDSHAKES wait at once: beyond that, the oldest waiting connection of the address
// that holds the most is closed to make room, so a flood from one host displaces its own
// connections first, a new controller still gets its turn, and established ones are never
// touched.

import { lookup } from "node:dns/promises";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from "node:tls";
import type { Tls } from "./tls.js";

/** How long a connection has to complete its TLS handshake: a controller needs a few round trips. */
export const HANDSHAKE_DEADLINE_MS = 10_000;

/** Connections whose handshake has not completed, at most, at once (each holds a descriptor and ~50 KB). */
export const MAX_PENDING_HANDSHAKES = 1024;

export interface HandshakeLimits {
  readonly deadlineMs: number;
  readonly maxPending: number;
}

export const HANDSHAKE_LIMITS: HandshakeLimits = {
  deadlineMs: HANDSHAKE_DEADLINE_MS,
  maxPending: MAX_PENDING_HANDSHAKES,
};

/** A connection waiting for its handshake: its peer's address, its deadline, and both its ends. */
interface Pending {
  readonly address: string;
  readonly timer: NodeJS.Timeout;
  readonly ends: string;
}

/** A TCP connection's two ends, unique while it lives (a TLS socket reports those of the connection under it). */
const endsOf = (s: Socket): string => `${s.localAddress}|${s.localPort}|${s.remoteAddress}|${s.remotePort}`;

export class TlsListener {
  /** The port listened on (the one chosen for port 0). */
  port = 0;
  /** Connections closed because their deadline passed, or to make room for a newer one. */
  readonly closed = { deadline: 0, room: 0 };
  readonly #limits: HandshakeLimits;
  readonly #admit: (socket: TLSSocket) => void;
  readonly #handshakes: TlsServer;
  readonly #servers: NetServer[] = [];
  /** In the order they came: the first is the oldest. */
  readonly #pending = new Map<Socket, Pending>();
  /** The waiting connections by their ends, to find one when its TLS socket is secure. */
  readonly #byEnds = new Map<string, Socket>();

  private constructor(tls: Tls, admit: (socket: TLSSocket) => void, limits: HandshakeLimits) {
    this.#limits = limits;
    this.#admit = admit;
    this.#handshakes = createTlsServer({
      cert: tls.cert,
      key: tls.key,
      ...(tls.ca !== undefined ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
      ALPNProtocols: ["h2"],
      // The deadline is ours (#accept), from the connection: the TLS server's own is an idle time, restarted by every
      // byte a slow client sends.
      handshakeTimeout: 0,
    });
    // A client whose handshake fails (no certificate, another CA's) is closed by the TLS server: nothing to add.
    this.#handshakes.on("tlsClientError", () => {});
    this.#handshakes.on("secureConnection", (socket: TLSSocket) => this.#secure(socket));
  }

  /**
   * Listens on HOST:PORT (every address HOST resolves to, on one port); each connection that
   * completes its handshake is given to `admit`.
   */
  static async listen(
    address: string,
    tls: Tls,
    admit: (socket: TLSSocket) => void,
    limits: HandshakeLimits = HANDSHAKE_LIMITS,
  ): Promise<TlsListener> {
    const listener = new TlsListener(tls, admit, limits);
    const colon = address.lastIndexOf(":");
    const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
    listener.port = Number(address.slice(colon + 1));
    // As gRPC binds a name: every address it resolves to, and one that listens is enough (localhost's ::1 may not).
    let failed: unknown;
    try {
      for (const { address: ip } of await lookup(host, { all: true })) {
        try {
          await listener.#listen(ip);
        } catch (e) {
          failed ??= e;
        }
      }
    } catch (e) {
      failed = e;
    }
    if (listener.#servers.length === 0) {
      listener.close();
      throw failed;
    }
    return listener;
  }

  async #listen(ip: string): Promise<void> {
    const server = createNetServer((raw) => this.#accept(raw));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: ip, port: this.port }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.#servers.push(server);
    const at = server.address();
    if (at !== null && typeof at === "object") this.port = at.port;
  }

  /** Connections whose handshake has not completed. */
  get pending(): number {
    return this.#pending.size;
  }

  #accept(raw: Socket): void {
    raw.on("error", () => {});
    if (this.#pending.size >= this.#limits.maxPending) {
      const victim = oldestOfBusiest(this.#pending);
      if (victim !== undefined) this.#drop(victim, "room");
    }
    const ends = endsOf(raw);
    const timer = setTimeout(() => this.#drop(raw, "deadline"), this.#limits.deadlineMs);
    this.#pending.set(raw, { address: raw.remoteAddress ?? "", timer, ends });
    this.#byEnds.set(ends, raw);
    raw.once("close", () => this.#settle(raw));
    this.#handshakes.emit("connection", raw);
  }

  #secure(socket: TLSSocket): void {
    const raw = this.#byEnds.get(endsOf(socket));
    // Closed to make room while its last handshake message was on the way.
    if (raw === undefined) return void socket.destroy();
    this.#settle(raw);
    this.#admit(socket);
  }

  /** The connection no longer waits: secure, or closed. */
  #settle(raw: Socket): void {
    const p = this.#pending.get(raw);
    if (p === undefined) return;
    clearTimeout(p.timer);
    this.#pending.delete(raw);
    this.#byEnds.delete(p.ends);
  }

  #drop(raw: Socket, why: "deadline" | "room"): void {
    this.closed[why]++;
    this.#settle(raw);
    raw.destroy();
  }

  /** Stops listening and closes the connections still in their handshake (the admitted ones are gRPC's). */
  close(): void {
    for (const s of this.#servers) s.close();
    for (const raw of [...this.#pending.keys()]) {
      this.#settle(raw);
      raw.destroy();
    }
  }
}

/** The oldest waiting connection of the address that has the most waiting. */
function oldestOfBusiest(pending: ReadonlyMap<Socket, Pending>): Socket | undefined {
  const count = new Map<string, number>();
  for (const p of pending.values()) count.set(p.address, (count.get(p.address) ?? 0) + 1);
  let busiest = "";
  let most = 0;
  for (const [address, n] of count) if (n > most) [busiest, most] = [address, n];
  // Map iteration is insertion order: the first found is the oldest.
  for (const [raw, p] of pending) if (p.address === busiest) return raw;
  return undefined;
}
