// Control commands for a running emulation, one a line (`strata serve --commands`
// reads them from stdin). Each runs between packet batches and either takes
// effect whole or not at all: a bad command is one line and leaves the
// emulation as it was.
//
//   delete NETWORK:MEMBER TABLE ROW   take the description's row ROW out of the member's table
//   insert NETWORK:MEMBER TABLE ROW   put it back
//   reload                            read the description file again and reconcile to it (src/serve/watch.ts)
//   down|up link|member|machine NAME  take a link, member or machine down, or bring it up
//   counts                            packets so far, hits on the description's rows, and each live port's counts
//                                     (with --analyze, the last result of the analysis, ./analysis.ts)
//   stop                              stop as Ctrl-C does
//   help                              these lines

import type { Target } from "../control/reconcile.js";
import { parseIdentifier } from "../description/notation.js";
import { excerpt, UsageError } from "../errors.js";
import { TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import type { Engine } from "../engine/engine.js";
import { analysisOf } from "./analysis.js";
import { portLine } from "./port-counters.js";
import { reloaderOf } from "./watch.js";
import { COMMANDS_HELP } from "./commands-help.js";

/** The most bytes of a command line: a longer one is refused whole, never held (src/lines.ts). */
export const COMMAND_LINE_MAX = 4096;

/** What a command did: a line for the user, and whether it asks the emulation to stop. */
export interface CommandResult {
  readonly ok: boolean;
  readonly line: string;
  readonly stop?: boolean;
}

/** Runs one command line on `em`, between batches. Never throws for bad input: the result says what was wrong. */
export async function runCommand(em: Engine, line: string): Promise<CommandResult> {
  const words = line
    .trim()
    .split(/\s+/)
    .filter((w) => w !== "");
  const [verb, ...args] = words;
  switch (verb) {
    case undefined:
      return { ok: true, line: "" };
    case "help":
      return { ok: true, line: COMMANDS_HELP };
    case "stop":
      return { ok: true, line: "stopping", stop: true };
    case "reload": {
      const reloader = reloaderOf(em);
      if (reloader === undefined)
        return bad("this emulation has no description file to reload", "start it with strata serve");
      const r = await reloader.reload();
      // The reloader reports what it did (or the description's errors) itself.
      return { ok: r.ok, line: "" };
    }
    case "down":
    case "up":
      return setDown(em, verb, args);
    case "counts":
      return em.between(() => ({ ok: true, line: counts(em) }));
    case "delete":
    case "insert":
      return em.between(() => writeRow(em, verb, args));
    default:
      return bad(
        `unknown command '${excerpt(verb)}'`,
        "commands: delete, insert, reload, down, up, counts, stop, help",
      );
  }
}

/** down / up link|member|machine NAME. */
async function setDown(em: Engine, verb: "down" | "up", args: readonly string[]): Promise<CommandResult> {
  const usage = `write ${verb} link NETWORK:MEMBER.ID, ${verb} member NETWORK:MEMBER or ${verb} machine NAME`;
  const [kind, name, ...extra] = args;
  if (kind === undefined || name === undefined || extra.length > 0) return bad(`${verb} takes two words`, usage);
  if (kind !== "link" && kind !== "member" && kind !== "machine")
    return bad(`'${excerpt(kind)}' is not a link, member or machine`, usage);
  const reloader = reloaderOf(em);
  if (reloader === undefined) return bad("this emulation cannot take things down", "start it with strata serve");
  const target = { [kind]: name } as Target;
  try {
    const found = await reloader.setDown(target, verb === "down");
    return { ok: true, line: `${verb === "down" ? "down" : "up"}: ${[...found.links, ...found.members].join(", ")}` };
  } catch (err) {
    if (err instanceof UsageError) return { ok: false, line: err.message };
    throw err;
  }
}

function bad(problem: string, fix: string): CommandResult {
  return { ok: false, line: `${problem} (${fix})` };
}

function counts(em: Engine): string {
  const s = em.summary();
  const p = s.packets;
  const hits = s.rows.reduce((n, r) => n + r.hits, 0);
  const ports = (s.ports ?? []).map((port) => `\n${portLine(port)}`).join("");
  const live = analysisOf(em);
  const analysis = live === undefined ? "" : `\n${live.line()}`;
  return (
    `injected ${p.injected}, copies ${p.copies}, delivered ${p.delivered}, dropped ${p.dropped}, ` +
    `left ${p.exited}, row hits ${hits} on ${s.rows.length} rows${ports}${analysis}`
  );
}

/** delete / insert a description row, as one all-or-nothing table write. */
function writeRow(em: Engine, verb: "delete" | "insert", args: readonly string[]): CommandResult {
  const usage = `write ${verb} NETWORK:MEMBER TABLE ROW, e.g. ${verb} ip:r forward 1`;
  const [who, role, rowText, ...extra] = args;
  if (who === undefined || role === undefined || rowText === undefined || extra.length > 0)
    return bad(`${verb} takes three words`, usage);
  const colon = who.indexOf(":");
  const networks = em.installed.compiled.networks;
  const netName = colon < 0 ? (networks.length === 1 ? networks[0]?.name : undefined) : who.slice(0, colon);
  const key = colon < 0 ? who : who.slice(colon + 1);
  const member = em.installed.compiled.members.find((m) => networks[m.network]?.name === netName && m.key === key);
  if (member === undefined) {
    return bad(
      `there is no member '${excerpt(who)}'`,
      `members: ${em.installed.compiled.members.map((m) => `${networks[m.network]?.name}:${m.key}`).join(", ")}`,
    );
  }
  if (!(TABLE_ROLES as readonly string[]).includes(role))
    return bad(`'${excerpt(role)}' is not a table`, `tables: ${TABLE_ROLES.join(", ")}`);
  const table = member.tables[role as TableRole];
  if (table === undefined)
    return bad(`${member.qualified} has no ${role} table`, `its tables: ${Object.keys(member.tables).join(", ")}`);
  // Written as the description writes identifiers: decimal, without leading zeros (00001 is refused, not read as 1).
  const index = parseIdentifier(rowText);
  if (!index.ok) return bad(`${member.qualified}'s ${role} table: row ${index.problem}`, index.fix);
  const row = table.rows.find((r) => r.row === index.value);
  const rows = table.rows.filter((r) => r.row >= 0).map((r) => r.row);
  if (row === undefined)
    return bad(
      `${member.qualified}'s ${role} table has no row '${excerpt(rowText)}'`,
      rows.length === 0 ? "it has no rows from the description" : `rows: ${rows.join(", ")}`,
    );
  const result = em.write(
    verb === "delete"
      ? [{ op: "delete", table, match: row.match }]
      : [{ op: "insert", table, match: row.match, action: row.action }],
    "commands",
  );
  const what = `${member.qualified} ${role} row ${row.row} (${row.text})`;
  if (!result.ok) {
    const why: Record<string, string> = {
      NotFound: "it is not in the table",
      DuplicateEntry: "it is in the table already",
      TableFull: "the table is full",
    };
    return bad(
      `cannot ${verb} ${what}: ${why[result.error] ?? result.error}`,
      verb === "delete" ? "insert it first" : "delete it first",
    );
  }
  return { ok: true, line: `${verb === "delete" ? "deleted" : "inserted"} ${what}` };
}
