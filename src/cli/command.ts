// What every command's action shares with main(): the context it reports back through (the
// exit codes are ./exit-codes.ts). Its own module, so that commands need not import main().

import type { Io } from "./io.js";

/** What a command's action reports back to main(). */
export interface CommandContext {
  io: Io;
  exitCode: number;
}
