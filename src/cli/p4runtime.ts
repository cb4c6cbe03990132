// `strata p4runtime SPEC --listen HOST:PORT [--empty]`: keep an emulation of a
// description running behind a P4Runtime server (src/p4runtime/), one device
// per machine, until Ctrl-C. `strata serve` (live ports) can host the same
// server on its emulation (see docs/cli.md).

import type { Command } from "commander";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { UsageError } from "../errors.js";
import { LocalEmulation } from "../p4runtime/emulation.js";
import { CLOSE_GRACE_MS, describeStats, P4RuntimeServer } from "../p4runtime/server.js";
import type { CommandContext } from "./main.js";
import { EXIT_OK } from "./main.js";
import { StopSignals } from "./stop-signals.js";

interface Flags {
  listen: string;
  empty?: boolean;
}

/** HOST:PORT as gRPC binds it; a bad one is a usage error. */
export function listenAddress(text: string, flag = "--listen"): string {
  const m = /^(.+):(\d{1,5})$/.exec(text);
  const port = m === null ? -1 : Number(m[2]);
  if (m === null || port > 65535) throw new UsageError(`${flag} '${text}': write HOST:PORT, e.g. 127.0.0.1:9559 (port 0: any free port)`);
  return text;
}

export function registerP4Runtime(program: Command, ctx: CommandContext): void {
  program
    .command("p4runtime")
    .description("run a description behind a P4Runtime server (gRPC): one device per machine, as strata export p4 numbers them")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption("--listen <host:port>", "where the gRPC server listens, e.g. 127.0.0.1:9559 (port 0: any free port)")
    .option("--empty", "start every device with no entries (a controller installs them); otherwise each holds its export's WriteRequest")
    .addHelpText(
      "after",
      `
Runs until Ctrl-C (SIGINT) or SIGTERM, then gives open streams ${CLOSE_GRACE_MS / 1000} s to end, cancels
them and prints how many packet-outs and packet-ins it carried; a second Ctrl-C stops it at once (exit 130).
Exit codes: 0 stopped; 2 bad description or flag, or an address it cannot listen on.
docs/cli.md lists what the server does with Write, Read, StreamChannel and the pipeline config.`,
    )
    .action(async (spec: string, flags: Flags) => {
      ctx.exitCode = await runP4Runtime(spec, flags, ctx);
    });
}

async function runP4Runtime(spec: string, flags: Flags, ctx: CommandContext): Promise<number> {
  const address = listenAddress(flags.listen);
  const compiled = compile(loadSpec(spec));
  // Before the server is announced: a signal from then on stops it cleanly.
  const signals = new StopSignals();
  try {
    const emulation = new LocalEmulation(compiled);
    let server: P4RuntimeServer;
    try {
      server = await P4RuntimeServer.start(emulation, { address, source: spec, empty: flags.empty === true });
    } catch (e) {
      emulation.close();
      throw new UsageError(`--listen ${address}: cannot listen there (${e instanceof Error ? e.message : String(e)})`);
    }
    const devices = compiled.machines.map((m, i) => `${i + 1} ${m}`).join(", ");
    const host = address.slice(0, address.lastIndexOf(":"));
    ctx.io.stdout.write(`P4Runtime server on ${host}:${server.port} for ${spec}: devices ${devices}${flags.empty === true ? " (empty)" : ""}; Ctrl-C stops it\n`);
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
