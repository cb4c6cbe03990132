// A claim's lock file in DIR, .strata-lock.PID.START.K: the process that holds it named by its pid and its start, so a
// lock whose process is gone (even once its pid is used again) is told from a live one.

import { existsSync, readFileSync } from "node:fs";

/** A claim's lock file: .strata-lock.PID.START.K (START: the process's start, /proc/PID/stat field 22). */
export const LOCK = /^\.strata-lock\.([0-9]+)\.([0-9]+)\.[0-9]+$/;

/** Lock files made by this process so far (their K). */
let locks = 0;
/** This process's start (startOf), read once. */
let ownStart: string | undefined;

/** The name of this process's next lock file. */
export function nextLockName(): string {
  ownStart ??= startOf(process.pid) ?? "0";
  return `.strata-lock.${process.pid}.${ownStart}.${++locks}`;
}

/** The process (pid) that holds lock file `name` if it still runs; undefined for a stale lock, or a name not a
 * lock's. */
export function liveHolder(name: string): number | undefined {
  const m = LOCK.exec(name);
  if (m === null) return undefined;
  const pid = Number(m[1]);
  return alive(pid, m[2] ?? "") ? pid : undefined;
}

/**
 * A process's start, in clock ticks after boot (/proc/PID/stat, field 22): with its pid, it
 * names one process, even once the pid is used again. Undefined when there is no such process,
 * or no /proc (then "0" is written, and only the pid is checked).
 */
function startOf(pid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 2, the command's name, is in parentheses and may hold spaces and parentheses: count from the last ")".
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
}

/** Whether the process that made a lock file (pid, start) still runs. */
function alive(pid: number, start: string): boolean {
  if (existsSync("/proc/self/stat") && start !== "0") return startOf(pid) === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
