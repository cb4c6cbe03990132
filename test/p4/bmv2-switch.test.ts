// bench/p4/bmv2.ts's Switch when its simple_switch dies under it (killed, or one that exits while starting and is
// started again on other ports, as a busy CI machine showed): the packets sent to it after that break its ports
// socket, and the break is said with the switch's stderr, never thrown where no one listens (vitest counts an
// uncaught EPIPE as a failed run). Skipped where the P4 toolchain is missing, unless STRATA_REQUIRE_P4=1.

import { describe, expect, it } from "vitest";
import { Switch } from "../../bench/p4/bmv2.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";
import { HANG_MS } from "../helpers/wait.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

const FRAME = new Uint8Array(64).fill(0xab);
const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe.skipIf(skip)(`a switch whose process died${why}`, () => {
  it.each([{ program: "simple_switch_grpc", start: () => Switch.startGrpc(tools as never, 0) }])(
    "$program killed, then sent packets: the broken socket is said in its stderr",
    async ({ start }) => {
      if ("missing" in tools) throw new Error(tools.missing);
      const sw = await start();
      try {
        const pid = sw.pid;
        expect(pid).toBeTypeOf("number");
        // A packet sent in the same turn as the kill, so that it meets the dying process (or the dead one): the
        // socket breaks with ECONNRESET (unread data at the close) or EPIPE, never with a quiet end.
        process.kill(pid as number, "SIGKILL");
        sw.send(1, FRAME);
        while (!/its ports socket/.test(sw.stderr)) await pause();
        expect(sw.stderr).toMatch(/\(its ports socket: \w+ E[A-Z]+\)$/);
      } finally {
        await sw.stop();
      }
    },
    HANG_MS,
  );
});
