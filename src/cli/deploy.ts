// `strata deploy SPEC --target MACHINE=HOST:PORT[@DEVICE_ID] … [--plan] [--watch] [--json]`:
// each named machine converged onto its P4Runtime device (src/deploy/), once, or (--watch) kept
// there until Ctrl-C. The flags are in commands/deploy.ts.

import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { UsageError } from "../errors.js";
import { desiredState, type MachineDesired } from "../deploy/desired.js";
import { once } from "../deploy/library.js";
import { type DeployOptions, type Outcome, Refusal, type Target } from "../deploy/machine.js";
import { Watch } from "../deploy/watch.js";
import { failureLine, outcomeJson, outcomeLine, planLines } from "../deploy/words.js";
import { didYouMean } from "../description/suggest.js";
import type { ClientTls } from "../p4runtime/client.js";
import { readTlsFile } from "../p4runtime/tls.js";
import type { CommandContext } from "./command.js";
import { EXIT_NOT_PRIMARY, EXIT_OK, EXIT_PROBLEM } from "./exit-codes.js";
import { StopSignals } from "./stop-signals.js";

export interface TargetFlag {
  readonly machine: string;
  readonly address: string;
  readonly deviceId?: bigint;
}

export interface DeployFlags {
  target: TargetFlag[];
  electionId?: bigint;
  role?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  plan?: boolean;
  watch?: boolean;
  poll?: number;
  batch?: number;
  timeout?: number;
  json?: boolean;
}

/** How long a device has to answer before it is taken for unreachable, unless --timeout says otherwise. */
const TIMEOUT_S = 10;

/** The TLS flags as a client's: none given, plain text. */
export function clientTls(flags: DeployFlags): ClientTls | undefined {
  if (flags.tlsCert === undefined && flags.tlsKey === undefined && flags.tlsCa === undefined) return undefined;
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined))
    throw new UsageError("--tls-cert and --tls-key go together: our client certificate and its key");
  return {
    ...(flags.tlsCa !== undefined ? { ca: readTlsFile(flags.tlsCa, "--tls-ca") } : {}),
    ...(flags.tlsCert !== undefined ? { cert: readTlsFile(flags.tlsCert, "--tls-cert") } : {}),
    ...(flags.tlsKey !== undefined ? { key: readTlsFile(flags.tlsKey, "--tls-key") } : {}),
  };
}

/** The targets, each a machine of the description, each once. */
export function targetsOf(flags: readonly TargetFlag[], desired: readonly MachineDesired[]): Target[] {
  const seen = new Set<string>();
  return flags.map((t) => {
    const d = desired.find((m) => m.machine === t.machine);
    if (d === undefined) {
      const names = desired.map((m) => m.machine);
      throw new UsageError(
        `--target ${t.machine}=${t.address}: the description has no machine ${t.machine} ` +
          `(${didYouMean(t.machine, names)}machines: ${names.join(", ")})`,
      );
    }
    if (seen.has(t.machine)) throw new UsageError(`--target ${t.machine}: given twice (one device per machine)`);
    seen.add(t.machine);
    return { machine: t.machine, address: t.address, deviceId: t.deviceId ?? BigInt(d.deviceId) };
  });
}

export async function runDeploy(spec: string, flags: DeployFlags, ctx: CommandContext): Promise<number> {
  const desired = desiredState(compile(loadSpec(spec)), spec);
  const targets = targetsOf(flags.target, desired);
  const tls = clientTls(flags);
  const options: DeployOptions = {
    electionId: flags.electionId ?? 1n,
    role: flags.role ?? "",
    ...(tls !== undefined ? { tls } : {}),
    batch: flags.batch ?? 1000,
    connectMs: (flags.timeout ?? TIMEOUT_S) * 1000,
  };
  if (flags.watch === true) {
    if (flags.plan === true) throw new UsageError("--plan writes nothing and --watch keeps writing: give one of them");
    const signals = new StopSignals();
    try {
      const watch = new Watch(
        spec,
        targets,
        options,
        flags.poll ?? 1000,
        desired,
        (line) => {
          ctx.io.stdout.write(`${line}\n`);
          void ctx.io.stdout.flush();
        },
        flags.json === true,
      );
      await watch.run(signals.stopped);
      return EXIT_OK;
    } finally {
      signals.dispose();
    }
  }
  const results = await Promise.all(
    // targetsOf checked that every target is a machine of the description.
    targets.map((t) =>
      once(t, options, desired.find((m) => m.machine === t.machine) as MachineDesired, flags.plan === true),
    ),
  );
  report(results, flags, ctx);
  if (results.some((r) => r instanceof Refusal && r.notPrimary !== undefined)) return EXIT_NOT_PRIMARY;
  if (results.some((r) => !("pipeline" in r) || r.failed.length > 0)) return EXIT_PROBLEM;
  return EXIT_OK;
}

function report(results: readonly (Outcome | Refusal)[], flags: DeployFlags, ctx: CommandContext): void {
  const plan = flags.plan === true;
  const machines = flags.target.map((t) => t.machine);
  results.forEach((r, i) => {
    if (r instanceof Refusal)
      ctx.io.stderr.write(`strata: deploy: ${machines[i]} (${flags.target[i]?.address}): ${r.message}\n`);
    else for (const f of r.failed) ctx.io.stderr.write(`strata: deploy: ${failureLine(r.machine, f)}\n`);
  });
  if (flags.json === true) {
    const json = results.map((r, i) =>
      r instanceof Refusal
        ? { machine: machines[i], refused: r.message, ...(r.notPrimary !== undefined ? { notPrimary: true } : {}) }
        : outcomeJson(r, plan),
    );
    ctx.io.stdout.write(`${JSON.stringify({ machines: json }, null, 2)}\n`);
    return;
  }
  for (const r of results) {
    if (r instanceof Refusal) continue;
    ctx.io.stdout.write(`${outcomeLine(r, plan)}\n`);
    if (plan) for (const line of planLines(r)) ctx.io.stdout.write(`${line}\n`);
  }
}
