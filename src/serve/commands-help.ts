// The control commands of `strata serve --commands` (./control.ts runs them), as `help` and
// `strata serve --help` list them: their own module, so that the help needs no engine.

export const COMMANDS_HELP = `commands, one a line:
  delete NETWORK:MEMBER TABLE ROW   take row ROW (its index in the description's table) out of the table
  insert NETWORK:MEMBER TABLE ROW   put that row back
  reload                            read the description again: its table changes applied at once, or errors
  down link|member|machine NAME     take it down: what crosses or reaches it is dropped (link-down, member-down)
  up link|member|machine NAME       bring it up again
  counts                            packets injected, delivered, dropped and left, row hits, and per port
                                    frames received, sent and dropped on the way in, so far
                                    (with --analyze: which properties failed in the last analysis,
                                    and whether a newer one is running)
  stop                              stop (as Ctrl-C does)
  help                              this list`;
