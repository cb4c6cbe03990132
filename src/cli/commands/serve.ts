// `strata serve`'s name, flags and help; the emulation (../serve.ts) is loaded when it runs.

import { type Command, Option } from "commander";
import { CLOSE_GRACE_MS } from "../../p4runtime/close-grace.js";
import { parsePacketRanges, TRACE_PACKETS_HELP } from "../../run/trace-packets.js";
import { COMMANDS_HELP } from "../../serve/commands-help.js";
import { PORT_BACKENDS } from "../../serve/port-backend.js";
import type { CommandContext } from "../command.js";
import { collect, limit, TRACE_MAX_BYTES } from "../options.js";
import type { ServeFlags } from "../serve.js";
import { listenAddress } from "../listen.js";
import { tlsOptions } from "./p4runtime.js";
import { copyLimitOption, hopLimitOption } from "./run.js";

/** The largest --trace-max, in MB: a million megabytes. */
const TRACE_MAX_MB = 1_000_000;

/** What `strata serve --help` says after the flags: ports, stopping, commands, reloading, exit codes. */
const SERVE_HELP = `
Ports: --port lanA:hostA=veth0 plugs the external link hostA of network lanA into the
interface veth0: frames arriving on veth0 enter the network on hostA, and frames the
network sends out on hostA leave through veth0. The interface must carry the network's
header (Ethernet for ethernet). --port-backend packet (Linux; the default where npm run
build compiled build/strata-port-helper) opens it with AF_PACKET rings, at a fraction of
the CPU a frame; cap opens it with libpcap, through the optional npm package cap.
Each port has a process of its own: an interface going down closes its port alone, until
it is up. Per port, the counts (and summary.json's ports) say what was dropped on the way
in: by the interface, by the capture (its buffer was full: strata fell behind; or the
port was closed), by strata (it took no frames: starting or stopping).

strata prints "serving …" on stderr once packets flow; Ctrl-C (or SIGTERM, or the
command stop) stops it cleanly: the last packets are run, --out is written, the counts
are printed, and the exit code is 0. A P4Runtime server gives its open streams
${CLOSE_GRACE_MS / 1000} s to end, then cancels them. A second Ctrl-C stops at once (exit 130).

${COMMANDS_HELP}

Reloading: with --watch, a change to the description's file is applied a moment after the
file stops changing; SIGHUP (kill -HUP) and the command reload apply it at once. The new
description is compiled and diffed against the installed tables, and the difference is
written as one atomic step between packet batches. A description with errors is reported
(strata: FILE:LINE:COL: …) and the emulation goes on as it was. Members, links and
networks stay as they were started: a change to them is refused (restart to change them).

Exit codes: 0 stopped; 2 bad description, port, interface, flag or --out (nothing runs).
All exit codes: strata --help.`;

export function registerServe(program: Command, ctx: CommandContext): void {
  const command = program
    .command("serve")
    .description("keep an emulation running, its external links plugged into network interfaces")
    .argument("<spec>", "network description (YAML or JSON)")
    .option(
      "--port <endpoint=iface>",
      "bind an external link (NETWORK:EXTERNAL) to a network interface; repeatable",
      collect,
      [],
    )
    .addOption(
      new Option(
        "--port-backend <backend>",
        "what opens the ports' interfaces: packet (AF_PACKET rings, Linux; the default where built) or cap (libpcap)",
      ).choices(PORT_BACKENDS),
    )
    .option(
      "--out <dir>",
      "at the end, write links/, delivered/, summary.json (and trace.jsonl) here, as strata run does",
    )
    .option("--force", "write into a non-empty --out directory strata did not write (never replacing a file there)")
    .option("--trace", "also write trace.jsonl into --out: every step of every packet")
    .addOption(
      new Option("--trace-packets <ranges>", TRACE_PACKETS_HELP).argParser((v: string) => parsePacketRanges(v)),
    )
    .addOption(
      new Option(
        "--trace-max <mb>",
        `with --trace or --trace-packets: stop tracing once trace.jsonl holds this many megabytes, and say so ` +
          `(1 to ${TRACE_MAX_MB}; default ${TRACE_MAX_BYTES / 1e6})`,
      ).argParser(limit("--trace-max", TRACE_MAX_MB)),
    )
    .option("--json", "at the end, print the summary as JSON on stdout instead of a short report")
    .option("--commands", "read control commands from stdin, one a line (help lists them)")
    .addOption(hopLimitOption())
    .addOption(copyLimitOption())
    .option(
      "--p4runtime <host:port>",
      "serve the emulation over P4Runtime (gRPC) too: one device per machine, " +
        "as strata export p4 numbers them (port 0: any free port)",
      listenAddress("--p4runtime"),
    )
    .option("--empty", "with --p4runtime: start every device with no entries, for a controller to install");
  tlsOptions(command, "with --p4runtime: ")
    .option(
      "--watch",
      "reload the description when its file changes: its tables are " +
        "reconciled between packet batches (SIGHUP and the reload command " +
        "reload it too)",
    )
    .option(
      "--analyze",
      "keep strata analyze's relations current as the tables change (updated " +
        "from the rows written, in a thread of its own: packets never wait for it); " +
        "the counts command shows which properties fail",
    )
    .addHelpText("after", SERVE_HELP)
    .action(async (spec: string, flags: ServeFlags) => {
      const { serve } = await import("../serve.js");
      ctx.exitCode = await serve(spec, flags, ctx.io, { signals: true });
    });
}
