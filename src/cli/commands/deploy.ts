// `strata deploy`'s name, flags and help; the deploy itself (../deploy.ts, gRPC) is loaded when it runs.

import type { Command } from "commander";
import { UsageError } from "../../errors.js";
import type { CommandContext } from "../command.js";
import type { DeployFlags, TargetFlag } from "../deploy.js";
import { limit, seconds } from "../options.js";

/** MACHINE=HOST:PORT[@DEVICE_ID], added to those before. */
export function targetFlag(text: string, previous: TargetFlag[] = []): TargetFlag[] {
  const m = /^([^=]+)=(.+):(\d{1,5})(?:@(\d{1,20}))?$/.exec(text);
  const port = m === null ? -1 : Number(m[3]);
  if (m === null || port < 1 || port > 65535)
    throw new UsageError(
      `--target '${text}': write MACHINE=HOST:PORT or MACHINE=HOST:PORT@DEVICE_ID, e.g. m1=127.0.0.1:9559@1`,
    );
  const [, machine = "", host = "", , id] = m;
  return [...previous, { machine, address: `${host}:${port}`, ...(id !== undefined ? { deviceId: BigInt(id) } : {}) }];
}

/** A number of seconds above 0, at most `max`, decimals allowed. */
function positiveSeconds(flag: string, max: number): (v: string) => number {
  const parse = seconds(flag, max);
  return (v) => {
    const n = parse(v);
    if (n <= 0) throw new UsageError(`${flag} ${v}: give a number of seconds above 0 (like 10 or 0.5)`);
    return n;
  };
}

/** A P4Runtime election id: a whole number from 1 to 2^128 − 1. */
export function electionId(text: string): bigint {
  const n = /^\d{1,39}$/.test(text) ? BigInt(text) : -1n;
  if (n < 1n || n >= 1n << 128n)
    throw new UsageError(`--election-id '${text}': a whole number from 1 to 2^128 − 1 (a larger one wins)`);
  return n;
}

export function registerDeploy(program: Command, ctx: CommandContext): void {
  program
    .command("deploy")
    .description(
      "put a description's machines onto P4Runtime devices and keep them there: set each device's pipeline, " +
        "then write only the entries it lacks or holds wrong",
    )
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--target <machine=host:port[@id]>",
      "a machine and the device it goes on (device id: the export's, the machine's place from 1); repeat per machine",
      targetFlag,
    )
    .option("--election-id <n>", "our election id: the device's highest is its primary (default 1)", electionId)
    .option("--role <name>", "the P4Runtime role to arbitrate for (default: the default role)")
    .option("--tls-ca <file>", "connect over TLS, checking the device's certificate against this CA (PEM)")
    .option("--tls-cert <file>", "over TLS, present this client certificate (PEM; give --tls-key too)")
    .option("--tls-key <file>", "the private key of --tls-cert's certificate (PEM, not encrypted)")
    .option(
      "--plan",
      "print what would be written to each device, per table, with the row it comes from; write nothing",
    )
    .option("--watch", "keep converging: on a change of the description, a device's drift, restart or reconnection")
    .option(
      "--poll <ms>",
      "with --watch: how often each device is read for drift (default 1000)",
      limit("--poll", 3_600_000),
    )
    .option("--batch <n>", "the most updates in one Write (default 1000)", limit("--batch", 100_000))
    .option(
      "--timeout <seconds>",
      "how long a device has to connect and answer our arbitration (default 10)",
      positiveSeconds("--timeout", 3600),
    )
    .option("--json", "print the outcome as JSON (with --watch: one object a line)")
    .addHelpText(
      "after",
      `
A device that runs another program gets the machine's (SetForwardingPipelineConfig,
VERIFY_AND_COMMIT; bmv2 needs the program compiled: p4c-bm2-ss is looked for in
$STRATA_P4TOOLS, /opt/strata-p4/p4, /opt/p4/p4); one that runs the same program with a
table keyed otherwise is refused. A second run writes nothing.
With --watch, Ctrl-C (SIGINT) or SIGTERM stops it and prints what it did.
Exit codes: 0 every machine converged; 1 a machine could not be (unreachable, refused, or an
entry the device refused: each said with the row it comes from); 2 bad description or flag;
3 another controller with a higher election id is primary.
docs/cli.md tells the rest.`,
    )
    .action(async (spec: string, flags: DeployFlags) => {
      const { runDeploy } = await import("../deploy.js");
      ctx.exitCode = await runDeploy(spec, flags, ctx);
    });
}
