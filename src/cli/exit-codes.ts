// strata's exit codes (DESIGN.md §5; docs/cli.md has the same table): what every command
// returns, and main() for what went wrong around it.

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;
export const EXIT_BAD_INPUT = 2;
/** strata analyze: a budget (--max-classes, --time-limit) ended the analysis before it could answer in full. */
export const EXIT_INCOMPLETE = 3;
/** strata deploy: another controller with a higher election id is primary on a device. */
export const EXIT_NOT_PRIMARY = 3;
export const EXIT_INTERNAL = 70;
export const EXIT_INTERRUPTED = 130;

/** The exit codes, for `strata --help`. */
export const EXIT_CODES_HELP = `Exit codes:
  0    done
  1    a check found the problem it looks for (strata place: a machine could not be placed; strata deploy: a machine
       could not be converged)
  2    bad input: a description, capture, endpoint, flag or --out directory (one line on stderr)
  3    strata analyze: cut short by --max-classes or --time-limit (what it found is printed, and what it could not
       tell); strata deploy: another controller with a higher election id is primary
  70   internal error: a bug in strata (a stack trace on stderr; please report it)
  130  interrupted (Ctrl-C)`;
