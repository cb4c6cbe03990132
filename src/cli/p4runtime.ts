// `strata p4runtime SPEC --listen HOST:PORT [--empty] [--tls-cert FILE --tls-key FILE
// [--tls-ca FILE]]`: keep an emulation of a description running behind a P4Runtime
// server (src/p4runtime/), one device per machine, until Ctrl-C. `strata serve` (live
// ports) can host the same server on its emulation (see docs/cli.md); the lines about where
// and how it listens are here, for both (the flags are in commands/p4runtime.ts).

import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { UsageError } from "../errors.js";
import { EngineEmulation } from "../p4runtime/emulation.js";
import { describeStats, P4RuntimeServer } from "../p4runtime/server.js";
import { isLoopback, loadTls, type Tls } from "../p4runtime/tls.js";
import type { CommandContext } from "./command.js";
import { EXIT_OK } from "./exit-codes.js";
import { StopSignals } from "./stop-signals.js";

/** The TLS flags of both commands that serve P4Runtime. */
export interface TlsFlags {
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
}

export interface P4RuntimeFlags extends TlsFlags {
  /** HOST:PORT, checked by listenAddress (./listen.ts) when the flag was read. */
  listen: string;
  empty?: boolean;
}

/** The HOST of a HOST:PORT. */
const hostOf = (address: string): string => address.slice(0, address.lastIndexOf(":"));

/** The TLS flags' files, read and checked; none without --tls-cert. Half a pair is a usage error, a bad file an input
 * error naming it; a certificate outside its dates a line to `warn`. */
export function tlsOf(flags: TlsFlags, warn: (line: string) => void): Tls | undefined {
  if (flags.tlsCert === undefined && flags.tlsKey === undefined) {
    if (flags.tlsCa !== undefined)
      throw new UsageError("--tls-ca checks the clients' certificates over TLS: give --tls-cert and --tls-key too");
    return undefined;
  }
  if (flags.tlsCert === undefined)
    throw new UsageError("--tls-key is the key of a --tls-cert certificate: give --tls-cert FILE too");
  if (flags.tlsKey === undefined) throw new UsageError("--tls-cert needs its private key: give --tls-key FILE too");
  return loadTls(
    { cert: flags.tlsCert, key: flags.tlsKey, ...(flags.tlsCa !== undefined ? { ca: flags.tlsCa } : {}) },
    warn,
  );
}

/** The warning line for a server that listens beyond loopback in plain text, or none. */
export function exposureWarning(flag: string, address: string, tls: Tls | undefined): string | undefined {
  if (tls !== undefined || isLoopback(hostOf(address))) return undefined;
  return (
    `strata: warning: ${flag} ${address}: no TLS beyond loopback: anyone who reaches this address can ` +
    `become primary, write the tables and send packets from the emulated members (give --tls-cert, ` +
    `--tls-key and --tls-ca, or listen on 127.0.0.1)`
  );
}

/** "127.0.0.1:9559", with how it is secured: the server's address for the line announcing it. */
export function servedAt(address: string, port: number, tls: Tls | undefined): string {
  const secured = tls === undefined ? "" : tls.ca === undefined ? " over TLS" : " over TLS with client certificates";
  return `${hostOf(address)}:${port}${secured}`;
}

export async function runP4Runtime(spec: string, flags: P4RuntimeFlags, ctx: CommandContext): Promise<number> {
  const address = flags.listen;
  const tls = tlsOf(flags, (line) => ctx.io.stderr.write(`${line}\n`));
  const compiled = compile(loadSpec(spec));
  // Before the server is announced: a signal from then on stops it cleanly.
  const signals = new StopSignals();
  try {
    const emulation = EngineEmulation.local(compiled, flags.empty !== true);
    let server: P4RuntimeServer;
    try {
      server = await P4RuntimeServer.start(emulation, {
        address,
        empty: flags.empty === true,
        ...(tls !== undefined ? { tls } : {}),
      });
    } catch (e) {
      emulation.close();
      throw new UsageError(`--listen ${address}: cannot listen there (${e instanceof Error ? e.message : String(e)})`);
    }
    const warning = exposureWarning("--listen", address, tls);
    if (warning !== undefined) ctx.io.stderr.write(`${warning}\n`);
    await ctx.io.stderr.flush();
    const devices = compiled.machines.map((m, i) => `${i + 1} ${m}`).join(", ");
    ctx.io.stdout.write(
      `P4Runtime server on ${servedAt(address, server.port, tls)} for ${spec}: ` +
        `devices ${devices}${flags.empty === true ? " (empty)" : ""}; Ctrl-C stops it\n`,
    );
    await ctx.io.stdout.flush();
    await signals.stopped;
    await server.close();
    emulation.close();
    ctx.io.stdout.write(`stopped: ${describeStats(server.stats)}\n`);
    await ctx.io.stdout.flush();
    return EXIT_OK;
  } finally {
    signals.dispose();
  }
}
