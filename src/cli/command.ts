// What every command shares with main(): the exit codes (DESIGN.md §5) and the context an
// action reports back through. Its own module, so that commands need not import main().

import type { Io } from "./io.js";

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INTERRUPTED = 130;

/** The exit codes, for `strata --help` (docs/cli.md has the same table). */
export const EXIT_CODES_HELP = `Exit codes:
  0    done
  1    a check found the problem it looks for (strata place: a machine could not be placed)
  2    bad input: a description, capture, endpoint, flag or --out directory (one line on stderr)
  70   internal error: a bug in strata (a stack trace on stderr; please report it)
  130  interrupted (Ctrl-C)`;

/** What a command's action reports back to main(). */
export interface CommandContext {
  io: Io;
  exitCode: number;
}
