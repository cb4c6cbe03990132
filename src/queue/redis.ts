// --queue's address: redis://[USER:PASSWORD@]HOST[:PORT][/DB], or rediss:// for TLS; the options ioredis (and BullMQ,
// which makes its own connections from them) takes; and a first look that Redis answers, so that a wrong address is
// one line, never a client retrying for ever.

import { isIP } from "node:net";
import { Command, Redis } from "ioredis";
import { UsageError } from "../errors.js";

/** Milliseconds a first connection may take before Redis is said not to answer. */
export const CONNECT_MS = 5000;

/** What ioredis and BullMQ both take to connect. */
export interface Connection {
  readonly host: string;
  readonly port: number;
  readonly db?: number;
  readonly username?: string;
  readonly password?: string;
  readonly tls?: { readonly servername?: string };
}

export interface QueueAddress {
  readonly options: Connection;
  /** The address for a person: without its password. */
  readonly shown: string;
}

const FORM = "give redis://HOST:PORT[/DB], or rediss:// for TLS, e.g. --queue redis://127.0.0.1:6379";

/** Reads --queue's value; UsageError if it is not a Redis address. */
export function parseQueueUrl(text: string): QueueAddress {
  const bad = (what: string): UsageError => new UsageError(`--queue ${text}: ${what} (${FORM})`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("not a URL");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw bad(`${url.protocol}// is not Redis's`);
  if (url.hostname === "") throw bad("no host");
  const port = url.port === "" ? 6379 : Number(url.port);
  const path = url.pathname.replace(/^\//, "");
  if (path !== "" && !/^\d{1,5}$/.test(path)) throw bad(`/${path} is not a database number`);
  if (url.search !== "" || url.hash !== "") throw bad("a query or fragment is not taken");
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const options: Connection = {
    host,
    port,
    ...(path === "" ? {} : { db: Number(path) }),
    ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
    // An address's certificate is checked against the address itself: TLS sends no server name for it (RFC 6066).
    ...(url.protocol === "rediss:" ? { tls: isIP(host) === 0 ? { servername: host } : {} } : {}),
  };
  const shown = `${url.protocol}//${url.username === "" ? "" : `${url.username}@`}${url.host}${url.pathname}`;
  return { options, shown };
}

/** A client for the run's own keys: it reconnects when Redis restarts, and a command fails after a few tries. */
export function client(address: QueueAddress): Redis {
  return new Redis({ ...address.options, lazyConnect: true, maxRetriesPerRequest: 20, connectTimeout: CONNECT_MS });
}

/** Connects `redis` and checks Redis answers; UsageError (one line: what it said, and the fix) if it does not. */
export async function reach(redis: Redis, address: QueueAddress): Promise<void> {
  const probe = new Redis({
    ...address.options,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_MS,
    retryStrategy: () => null,
  });
  // The socket's error says more than the client's ("Connection is closed.").
  let first: unknown;
  probe.on("error", (err: unknown) => (first ??= err));
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    const why = first ?? err;
    throw new UsageError(
      `--queue ${address.shown}: Redis does not answer: ${why instanceof Error ? why.message : String(why)} ` +
        "(start redis-server there, or give the address it listens on, its user and password)",
    );
  } finally {
    probe.disconnect();
  }
  redis.on("error", () => {});
  await redis.connect();
}

/**
 * SET `key` to `pieces` end to end, EX `ttlS`, the pieces handed to the connection's socket as they are. ioredis copies
 * a Buffer argument into one new buffer holding the whole command (about 12 MB a chunk: its pages faulted in, then
 * collected); this command writes its head, the pieces and its tail to the socket, which keeps them, uncopied, until
 * they are sent. The pieces must stay as they are until the promise settles (Redis answers once it has them all).
 */
export function setPieces(redis: Redis, key: string, pieces: readonly Uint8Array[], ttlS: number): Promise<unknown> {
  const command = new PiecesSet(key, pieces, ttlS);
  redis.sendCommand(command);
  return command.promise;
}

/** A RESP bulk string. */
const bulk = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

/** SET key value EX ttl, the value written piece by piece (ioredis's scripts write themselves the same way). */
class PiecesSet extends Command {
  readonly #key: string;
  readonly #pieces: readonly Uint8Array[];
  readonly #ttl: string;

  constructor(key: string, pieces: readonly Uint8Array[], ttlS: number) {
    // The arguments as ioredis shows them; the value is written by toWritable.
    super("set", [key, "", "EX", String(ttlS)]);
    [this.#key, this.#pieces, this.#ttl] = [key, pieces, String(ttlS)];
  }

  /** Called with the socket each time the command is sent (again after a reconnection). */
  override toWritable(socket: object): string {
    const out = socket as { write(chunk: Uint8Array | string): boolean };
    const length = this.#pieces.reduce((sum, p) => sum + p.length, 0);
    out.write(`*5\r\n${bulk("SET")}${bulk(this.#key)}$${length}\r\n`);
    for (const p of this.#pieces) if (p.length > 0) out.write(p);
    return `\r\n${bulk("EX")}${bulk(this.#ttl)}`;
  }
}
