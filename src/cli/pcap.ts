// `strata pcap …`: capture utilities.

import type { Command } from "commander";
import type { CommandContext } from "./main.js";

export function registerPcap(program: Command, _ctx: CommandContext): void {
  program.command("pcap").description("capture utilities (pcap and pcapng)");
}
