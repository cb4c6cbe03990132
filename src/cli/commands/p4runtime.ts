// `strata p4runtime`'s name, flags and help, and the TLS flags `strata serve` shares; the server
// (../p4runtime.ts, gRPC) is loaded when it runs.

import type { Command } from "commander";
import { CLOSE_GRACE_MS } from "../../p4runtime/close-grace.js";
import type { CommandContext } from "../command.js";
import type { P4RuntimeFlags } from "../p4runtime.js";

/** Adds --tls-cert, --tls-key and --tls-ca to a command that serves P4Runtime (`what`: which flag's server). */
export function tlsOptions(command: Command, what = ""): Command {
  return command
    .option("--tls-cert <file>", `${what}serve over TLS with this certificate (PEM; give --tls-key too)`)
    .option("--tls-key <file>", `${what}the private key of --tls-cert's certificate (PEM, not encrypted)`)
    .option(
      "--tls-ca <file>",
      `${what}admit only clients with a certificate signed by this CA (PEM; needs --tls-cert)`,
    );
}

export function registerP4Runtime(program: Command, ctx: CommandContext): void {
  const command = program
    .command("p4runtime")
    .description(
      "run a description behind a P4Runtime server (gRPC): one device per machine, as strata export p4 numbers them",
    )
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--listen <host:port>",
      "where the gRPC server listens, e.g. 127.0.0.1:9559 (port 0: any free port)",
    )
    .option(
      "--empty",
      "start every device with no entries (a controller installs them); otherwise each holds its export's WriteRequest",
    );
  tlsOptions(command)
    .addHelpText(
      "after",
      `
Runs until Ctrl-C (SIGINT) or SIGTERM, then gives open streams ${CLOSE_GRACE_MS / 1000} s to end, cancels
them and prints how many packet-outs and packet-ins it carried; a second Ctrl-C
stops it at once (exit 130).
Any client that reaches the server can become primary: listen on loopback, or use TLS with
--tls-ca (a line on stderr warns of a server beyond loopback without TLS).
Exit codes: 0 stopped; 2 bad description, flag or TLS file, or an address it cannot listen on.
docs/cli.md lists what the server does with Write, Read, StreamChannel and the pipeline config.`,
    )
    .action(async (spec: string, flags: P4RuntimeFlags) => {
      const { runP4Runtime } = await import("../p4runtime.js");
      ctx.exitCode = await runP4Runtime(spec, flags, ctx);
    });
}
