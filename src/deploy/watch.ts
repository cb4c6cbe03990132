// `strata deploy --watch`: every machine kept converged until stopped. A machine converges again
// when the description file changes, every poll (a device's drift: an entry deleted or changed
// behind our back), and when its stream ends (the device restarted or the connection dropped:
// reconnected with backoff, its pipeline set again if it came back empty). Each reconciliation
// that did something, and each loss and return of a device, is one line; stop() ends with a summary.

import { readFileSync, watch as fsWatch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { SpecError } from "../description/problems.js";
import { desiredState, type MachineDesired } from "./desired.js";
import { type DeployOptions, MachineLink, notPrimaryWords, type Outcome, type Target } from "./machine.js";
import { counts } from "./plan.js";
import { failureLine, outcomeJson, outcomeWords } from "./words.js";

/** Backoff between attempts to reach a device: from the first to the last, doubling. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** Quiet after a file event before the file is read (an editor writes in steps). */
const DEBOUNCE_MS = 50;

export interface Tally {
  reconciliations: number;
  changed: number;
  inserted: number;
  modified: number;
  deleted: number;
  refused: number;
  pipelines: number;
  reconnections: number;
}

/** What a line tells: a reconciliation that wrote, an update refused, a device lost, reached, or primary elsewhere, a
 * description that does not load. */
export type EventKind = "converged" | "refused" | "unreachable" | "reached" | "backup" | "description";

const tally = (): Tally => ({
  reconciliations: 0,
  changed: 0,
  inserted: 0,
  modified: 0,
  deleted: 0,
  refused: 0,
  pipelines: 0,
  reconnections: 0,
});

export class Watch {
  readonly #spec: string;
  readonly #targets: readonly Target[];
  readonly #options: DeployOptions;
  readonly #pollMs: number;
  readonly #say: (line: string) => void;
  readonly #json: boolean;
  #desired: readonly MachineDesired[];
  #text: string;
  #stopping = false;
  /** Wakes every machine's loop (a description change, or a stop). */
  readonly #wakers = new Set<(reason: string) => void>();
  readonly #tallies = new Map<string, Tally>();

  constructor(
    spec: string,
    targets: readonly Target[],
    options: DeployOptions,
    pollMs: number,
    desired: readonly MachineDesired[],
    say: (line: string) => void,
    json: boolean,
  ) {
    this.#spec = spec;
    this.#targets = targets;
    this.#options = options;
    this.#pollMs = pollMs;
    this.#desired = desired;
    this.#say = say;
    this.#json = json;
    this.#text = readFileSync(spec, "utf8");
  }

  /** One line: with --json an object with the kind of event, its words and `more`. */
  #line(machine: string, kind: EventKind, words: string, more: object = {}): void {
    const time = new Date().toISOString();
    if (this.#json) this.#say(JSON.stringify({ time, machine, event: kind, words, ...more }));
    else this.#say(`${time} ${machine}: ${words}`);
  }

  /** Each machine's counts so far. */
  get tallies(): ReadonlyMap<string, Readonly<Tally>> {
    return this.#tallies;
  }

  /** Runs until `stopped` resolves; then prints the summary. */
  async run(stopped: Promise<void>): Promise<void> {
    const watcher = this.#watchFile();
    void stopped.then(() => {
      this.#stopping = true;
      for (const w of this.#wakers) w("stop");
    });
    try {
      await Promise.all(this.#targets.map((t) => this.#machine(t)));
    } finally {
      watcher?.close();
    }
    this.#summary();
  }

  #watchFile(): FSWatcher | undefined {
    const name = basename(this.#spec);
    let timer: NodeJS.Timeout | undefined;
    try {
      return fsWatch(dirname(resolve(this.#spec)), { persistent: false }, (_event, file) => {
        if (file !== null && file !== name) return;
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(() => this.#reload(), DEBOUNCE_MS);
      });
    } catch {
      return undefined;
    }
  }

  #reload(): void {
    let text: string;
    try {
      text = readFileSync(this.#spec, "utf8");
    } catch {
      return; // gone for a moment while an editor replaces it: the next event reads it
    }
    if (text === this.#text) return;
    this.#text = text;
    try {
      this.#desired = desiredState(compile(loadSpec(this.#spec)), this.#spec);
    } catch (e) {
      const what = e instanceof SpecError ? e.lines().join("; ") : e instanceof Error ? e.message : String(e);
      this.#line("*", "description", `the description does not load (${what}); keeping the one before`);
      return;
    }
    for (const w of this.#wakers) w("the description changed");
  }

  /** Waits for the next reason to converge: a poll, a description change, the stream's end, a stop. */
  #wait(link: MachineLink | undefined, ms: number): Promise<string> {
    return new Promise((resolve) => {
      const done = (reason: string): void => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        link?.session?.off("end", onEnd);
        resolve(reason);
      };
      const onEnd = (): void => done("the stream ended");
      const timer = setTimeout(() => done("poll"), ms);
      this.#wakers.add(done);
      link?.session?.on("end", onEnd);
      if (this.#stopping) done("stop");
      else if (link?.session?.ended === true) done("the stream ended");
    });
  }

  async #machine(t: Target): Promise<void> {
    const count = tally();
    this.#tallies.set(t.machine, count);
    let link: MachineLink | undefined;
    let backoff = BACKOFF_FIRST_MS;
    let lost: string | undefined;
    let reason = "started";
    while (!this.#stopping) {
      try {
        if (link === undefined || link.session?.ended === true) {
          link?.close();
          link = new MachineLink(t, this.#options);
          const standing = await link.open(true);
          if (lost !== undefined) {
            count.reconnections++;
            this.#line(t.machine, "reached", `reached again (${t.address})`);
            reason = "reconnected";
            lost = undefined;
          }
          if (standing !== undefined && !standing.primary) {
            this.#line(t.machine, "backup", `${notPrimaryWords(standing, link.controller)}; waiting`);
            reason = await this.#untilPrimary(link);
            continue;
          }
        }
        const d = this.#desired.find((m) => m.machine === t.machine);
        if (d !== undefined) this.#outcome(t.machine, reason, await link.converge(d, false), count);
        backoff = BACKOFF_FIRST_MS;
        reason = await this.#wait(link, this.#pollMs);
        if (reason === "poll") reason = "drift";
      } catch (e) {
        link?.close();
        link = undefined;
        const message = e instanceof Error ? e.message : String(e);
        if (lost !== message) this.#line(t.machine, "unreachable", `${message}; trying again`);
        lost = message;
        await this.#wait(undefined, backoff);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
    link?.close();
  }

  /** Waits on a backup's stream until we are primary, the stream ends, or a stop. */
  #untilPrimary(link: MachineLink): Promise<string> {
    return new Promise((resolve) => {
      const s = link.session;
      const done = (reason: string): void => {
        s?.off("standing", onStanding);
        s?.off("end", onEnd);
        this.#wakers.delete(onStop);
        resolve(reason);
      };
      const onStop = (r: string): void => (r === "stop" ? done(r) : undefined);
      const onStanding = (x: { primary: boolean }): void => {
        if (x.primary) done("became primary");
      };
      const onEnd = (): void => done("the stream ended");
      s?.on("standing", onStanding);
      s?.on("end", onEnd);
      this.#wakers.add(onStop);
      if (this.#stopping || s === undefined || s.ended) done("stop");
    });
  }

  #outcome(machine: string, reason: string, o: Outcome, count: Tally): void {
    count.reconciliations++;
    for (const f of o.failed) this.#line(machine, "refused", failureLine(machine, f));
    if (!o.pipeline.set && o.changes.length === 0) return;
    const refused = new Set(o.failed.map((f) => f.change));
    const n = counts(o.changes.filter((c) => !refused.has(c)));
    count.changed++;
    count.inserted += n.insert;
    count.modified += n.modify;
    count.deleted += n.delete;
    count.refused += o.failed.length;
    if (o.pipeline.set) count.pipelines++;
    this.#line(machine, "converged", `${reason}: ${outcomeWords(o, false)}`, { reason, ...outcomeJson(o, false) });
  }

  #summary(): void {
    for (const [machine, c] of this.#tallies) {
      if (this.#json) this.#say(JSON.stringify({ machine, summary: c }));
      else
        this.#say(
          `stopped: ${machine}: ${c.reconciliations} reconciliations, ${c.changed} of them wrote: ` +
            `${c.inserted} inserted, ${c.modified} modified, ${c.deleted} deleted, ${c.refused} refused; ` +
            `${c.pipelines} pipelines set; ${c.reconnections} reconnections`,
        );
    }
  }
}
