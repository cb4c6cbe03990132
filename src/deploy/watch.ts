// `strata deploy --watch`: every machine kept converged until stopped. A machine converges again
// when the description file changes, every poll (a device's drift: an entry deleted or changed
// behind our back), and when its stream ends (the device restarted or the connection dropped:
// reconnected with backoff, its pipeline set again if it came back empty). Each reconciliation
// that did something, and each loss and return of a device, is one line; stop() ends with a summary.

import { readFileSync, watch as fsWatch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { Reloader } from "../control/reload.js";
import { SpecError } from "../description/problems.js";
import { desiredAfter, type MachineDesired, sameDesired } from "./desired.js";
import { type DeployOptions, MachineLink, notPrimaryWords, type Outcome, type Target } from "./machine.js";
import { counts } from "./plan.js";
import { failureLine, outcomeJson, outcomeWords } from "./words.js";

/** Backoff between attempts to reach a device: from the first to the last, doubling. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** How long a description that does not load may stay so, with no later event, before it is said (an editor that
 * writes in steps: the next event brings the rest). */
const UNLOADED_QUIET_MS = 250;

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
  /** Wakes a machine's loop (its desired state changed, or a stop), by machine. */
  readonly #wakers = new Map<string, (reason: string) => void>();
  /** A reload waiting for the event loop (the events of one write come together), or one to run again after it. */
  #reloading: "scheduled" | "again" | undefined;
  #unloaded: NodeJS.Timeout | undefined;
  /** Why a machine that was busy when its desired state changed is to converge again as soon as it is done. */
  readonly #pending = new Map<string, string>();
  readonly #tallies = new Map<string, Tally>();
  /** The description as last loaded: an edit is loaded at the cost of what it touched. */
  readonly #reloader: Reloader;
  /** Machines whose desired state a reload built again (the others kept theirs). */
  #built = 0;

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
    this.#reloader = new Reloader(spec);
    this.#text = readFileSync(spec, "utf8");
    try {
      // What the first edit is read against: the file as it is now (the desired state given was loaded from it).
      this.#reloader.load(this.#text, true);
    } catch {
      // It does not load (it changed since): the next change loads whole.
    }
  }

  /** Work the reloads did: whole loads, members compiled alone, machines whose desired state was built again. */
  get work(): { readonly loads: number; readonly members: number; readonly machines: number } {
    return { ...this.#reloader.work, machines: this.#built };
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
      for (const w of [...this.#wakers.values()]) w("stop");
    });
    try {
      await Promise.all(this.#targets.map((t) => this.#machine(t)));
    } finally {
      watcher?.close();
      clearTimeout(this.#unloaded);
    }
    this.#summary();
  }

  /** Reacts to the file's change at once: the events of one write are taken together, not waited out. */
  #watchFile(): FSWatcher | undefined {
    const name = basename(this.#spec);
    try {
      return fsWatch(dirname(resolve(this.#spec)), { persistent: false }, (_event, file) => {
        if (file !== null && file !== name) return;
        clearTimeout(this.#unloaded);
        if (this.#reloading !== undefined) return;
        this.#reloading = "scheduled";
        setImmediate(() => {
          this.#reloading = undefined;
          this.#reload();
        });
      });
    } catch {
      return undefined;
    }
  }

  /**
   * The file read and loaded again; the machines whose desired state changed are woken, the others not (their next
   * poll still reads their device). A file that does not load may be mid-write: the next event reads it again, and only
   * a file that stays so is said.
   */
  #reload(): void {
    let text: string;
    try {
      text = readFileSync(this.#spec, "utf8");
    } catch {
      return; // gone for a moment while an editor replaces it: the next event reads it
    }
    if (text === this.#text) return;
    let next: MachineDesired[];
    try {
      const reloaded = this.#reloader.load(text);
      if (reloaded === undefined) {
        this.#text = text;
        return;
      }
      next = desiredAfter(this.#desired, reloaded, this.#spec, new Set(this.#targets.map((t) => t.machine)));
    } catch (e) {
      const what = e instanceof SpecError ? e.lines().join("; ") : e instanceof Error ? e.message : String(e);
      this.#unloaded = setTimeout(() => {
        if (!this.#stillReads(text)) return;
        this.#text = text;
        this.#line("*", "description", `the description does not load (${what}); keeping the one before`);
      }, UNLOADED_QUIET_MS);
      return;
    }
    this.#text = text;
    const before = new Map(this.#desired.map((d) => [d.machine, d]));
    this.#desired = next;
    for (const d of next) {
      const was = before.get(d.machine);
      if (was === d) continue;
      this.#built++;
      if (was !== undefined && sameDesired(was, d)) continue;
      const wake = this.#wakers.get(d.machine);
      if (wake !== undefined) wake("the description changed");
      else this.#pending.set(d.machine, "the description changed");
    }
  }

  #stillReads(text: string): boolean {
    try {
      return readFileSync(this.#spec, "utf8") === text;
    } catch {
      return false;
    }
  }

  /** Waits for the next reason to converge: a poll, a description change, the stream's end, a stop. */
  #wait(machine: string, link: MachineLink | undefined, ms: number): Promise<string> {
    return new Promise((resolve) => {
      const done = (reason: string): void => {
        clearTimeout(timer);
        this.#wakers.delete(machine);
        link?.session?.off("end", onEnd);
        resolve(reason);
      };
      const onEnd = (): void => done("the stream ended");
      const timer = setTimeout(() => done("poll"), ms);
      this.#wakers.set(machine, done);
      link?.session?.on("end", onEnd);
      const pending = this.#pending.get(machine);
      this.#pending.delete(machine);
      if (this.#stopping) done("stop");
      else if (pending !== undefined) done(pending);
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
            reason = await this.#untilPrimary(t.machine, link);
            continue;
          }
        }
        const d = this.#desired.find((m) => m.machine === t.machine);
        if (d !== undefined) this.#outcome(t.machine, reason, await link.converge(d, false), count);
        backoff = BACKOFF_FIRST_MS;
        reason = await this.#wait(t.machine, link, this.#pollMs);
        if (reason === "poll") reason = "drift";
      } catch (e) {
        link?.close();
        link = undefined;
        const message = e instanceof Error ? e.message : String(e);
        if (lost !== message) this.#line(t.machine, "unreachable", `${message}; trying again`);
        lost = message;
        await this.#wait(t.machine, undefined, backoff);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
    link?.close();
  }

  /** Waits on a backup's stream until we are primary, the stream ends, or a stop. */
  #untilPrimary(machine: string, link: MachineLink): Promise<string> {
    return new Promise((resolve) => {
      const s = link.session;
      const done = (reason: string): void => {
        s?.off("standing", onStanding);
        s?.off("end", onEnd);
        this.#wakers.delete(machine);
        resolve(reason);
      };
      const onStop = (r: string): void => (r === "stop" ? done(r) : undefined);
      const onStanding = (x: { primary: boolean }): void => {
        if (x.primary) done("became primary");
      };
      const onEnd = (): void => done("the stream ended");
      s?.on("standing", onStanding);
      s?.on("end", onEnd);
      this.#wakers.set(machine, onStop);
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
