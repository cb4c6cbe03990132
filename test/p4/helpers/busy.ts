// Switches as a busy machine runs them (issue 29: load 15 on 2 cores): every simple_switch this
// process started is stopped (SIGSTOP) for a quarter of a second in every half, all together, as
// a scheduler leaves processes waiting while others run. A bmv2 test that waits for what the
// switches send, not for time, passes on them as on an idle machine, only slower.

import { readdirSync, readFileSync } from "node:fs";

/** How long the switches are stopped, and then left to run, each time. */
const STOP_MS = 250;

/** Stops and continues this process's switches, by turns, until the function it returns is called. */
export function busySwitches(): () => void {
  let stopped = false;
  const signal = (s: NodeJS.Signals): void => {
    for (const pid of ownSwitches()) {
      try {
        process.kill(pid, s);
      } catch {
        // exited meanwhile
      }
    }
  };
  const timer = setInterval(() => {
    stopped = !stopped;
    signal(stopped ? "SIGSTOP" : "SIGCONT");
  }, STOP_MS);
  return () => {
    clearInterval(timer);
    signal("SIGCONT");
  };
}

/** The simple_switch processes whose parent is this process (/proc/PID/stat: "pid (comm) state ppid …"). */
function ownSwitches(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${d}/stat`, "utf8");
      } catch {
        return []; // gone
      }
      const m = /^\d+ \((.*)\) \S+ (\d+) /.exec(stat);
      return m?.[1] === "simple_switch" && Number(m[2]) === process.pid ? [Number(d)] : [];
    });
}
