// What the analysis may spend: how many header classes a design may be cut into
// (`--max-classes`), how long it may take (`--time-limit`), and, inside, how
// large the class diagram may grow. The work is done in slices — a class walked,
// a session followed, a row checked, a few thousand diagram nodes made — and
// each slice asks the budget first (take()); once the time is up every later
// slice is refused, so each stage stops where it is and keeps what it found
// (a relation over the classes walked so far). The diagram, built by recursion
// over the header's bits, cannot stop half-way: reaching a limit there throws
// BudgetStop, which the analysis turns into a stop of its own (analysis.ts).
// Work that can be done another way (a table's behaviours, which the rows'
// patterns can stand in for) is a trial: it gets a share of the time left and
// the diagram's nodes, and past them it is given up (ShareSpent), not a stop.
// The time is wall time, the one place the analysis reads the clock: it is
// the user's limit. Tests give a clock of their own (`now`).

/** Which limit stopped the analysis. */
export type Limit = "classes" | "time" | "nodes" | "depth";

/** How far a stage of the analysis got: `done` of `total` units. */
export interface Progress {
  /** What the analysis is doing, after "while": "building the ipv4 header classes", "walking reachable in network
   * lan". */
  readonly stage: string;
  readonly done: number;
  readonly total: number;
  /** What it counts: "row patterns", "header classes", "sessions". */
  readonly unit: string;
}

export interface BudgetOptions {
  /** The most header classes a design may be cut into (dead ones included); undefined: no bound. */
  readonly maxClasses?: number;
  /** Seconds the analysis may take; undefined: no bound. */
  readonly timeLimit?: number;
  /** The most nodes the class diagram of a design may grow to (its memory). */
  readonly maxNodes?: number;
  /** Milliseconds, for the time limit (default: performance.now). */
  readonly now?: () => number;
  /** Told how far each stage got, now and then (a progress bar). */
  readonly progress?: (p: Progress) => void;
}

/** Where the analysis stopped, and why. */
export interface Stop extends Progress {
  readonly limit: Limit;
  /** What reached the limit, when the place that reached it says ("the rows cut the ipv4 headers into …"). */
  readonly message?: string;
}

/** `strata analyze`'s budget when its flags say nothing (`serve --analyze` takes it too): never unbounded. */
export const ANALYZE_LIMITS = { maxClasses: 100_000, timeLimit: 60 } as const;
/** `strata check`'s: its analysis is a few warnings, and a check stays quick. */
export const CHECK_LIMITS = { maxClasses: 20_000, timeLimit: 3 } as const;
/** The largest --max-classes and --time-limit (seconds) the flags take. */
export const MAX_CLASSES_MAX = 10_000_000;
export const TIME_LIMIT_MAX = 86_400;

/** The diagram's nodes when nothing else is said: 2^22, about 50 MiB of node arrays and their index. */
export const MAX_NODES = 1 << 22;

/**
 * What to do when the class diagram reaches its bound: no flag lifts it (it is the analysis's memory, and neither
 * `--max-classes` nor `--time-limit` bounds it), the rows that make classes multiply are the lever. Said in the one
 * line of every stop by it.
 */
export const NODES_HINT = "fewer ternary and range rows make fewer classes";

/** Thrown where the work cannot stop half-way (the diagram's recursion); the analysis catches it. */
export class BudgetStop extends Error {
  readonly limit: Limit;

  constructor(limit: Limit, message: string) {
    super(message);
    this.name = "BudgetStop";
    this.limit = limit;
  }
}

/** Thrown inside Budget.trial where the work passed its share: the trial gives it up, and no stop is recorded. */
export class ShareSpent extends BudgetStop {
  constructor(limit: Limit, message: string) {
    super(limit, message);
    this.name = "ShareSpent";
  }
}

/** The part of the time left that a trial may take. */
const TRIAL_SHARE = 0.5;

/** Slices between two readings of the clock on the fine-grained paths (diagram nodes, search steps). */
const TICKS_PER_READING = 1024;
/** Milliseconds between two progress reports. */
const PROGRESS_EVERY_MS = 100;

export class Budget {
  readonly maxClasses: number;
  readonly maxNodes: number;
  readonly #timeLimit: number | undefined;
  #deadline: number;
  /** Inside a trial, when it must end (at or before #deadline). */
  #trialDeadline: number | undefined;
  readonly #now: () => number;
  readonly #progress: ((p: Progress) => void) | undefined;
  #stop: Stop | undefined;
  #stage = "";
  #unit = "";
  #done = 0;
  #total = 0;
  #ticks = 0;
  #lastReport = -Infinity;

  constructor(options: BudgetOptions = {}) {
    this.maxClasses = options.maxClasses ?? Number.POSITIVE_INFINITY;
    this.maxNodes = options.maxNodes ?? MAX_NODES;
    this.#now = options.now ?? (() => performance.now());
    this.#progress = options.progress;
    this.#timeLimit = options.timeLimit;
    this.#deadline = this.#deadlineFrom(this.#now());
  }

  /** A new job (an update of a running analysis): the time limit counts from now, and a stop is forgotten. */
  renew(): void {
    this.#deadline = this.#deadlineFrom(this.#now());
    this.#stop = undefined;
  }

  #deadlineFrom(now: number): number {
    return this.#timeLimit === undefined ? Infinity : now + this.#timeLimit * 1000;
  }

  /** Why the analysis stopped, when it did. */
  get stopped(): Stop | undefined {
    return this.#stop;
  }

  /** A stage of `total` units begins (the progress it reports, and where a stop is said to be). */
  stage(name: string, total: number, unit: string): void {
    this.#stage = name;
    this.#unit = unit;
    this.#done = 0;
    this.#total = total;
    this.#report(true);
  }

  /** One unit of the stage is about to be done: true when there is time for it; false (from then on) when not. */
  take(): boolean {
    if (this.#stop !== undefined) return false;
    const now = this.#now();
    // A trial past its share gives up its work; the analysis goes on another way.
    if (this.#trialDeadline !== undefined && now > this.#trialDeadline) return false;
    if (now > this.#deadline) {
      this.#stopAt("time");
      return false;
    }
    this.#done++;
    if (this.#progress !== undefined && now - this.#lastReport >= PROGRESS_EVERY_MS) this.#report(false, now);
    return true;
  }

  /** take() where the work cannot stop half-way: throws BudgetStop instead of returning false. */
  need(): void {
    if (this.take()) return;
    if (this.#stop === undefined) throw new ShareSpent("time", "its share of the time passed");
    throw new BudgetStop(this.#stop.limit, "the analysis was stopped");
  }

  /** A fine-grained slice (a diagram node, a search step): reads the clock every so many, throws when the time is up.
   * */
  tick(): void {
    if (++this.#ticks < TICKS_PER_READING) return;
    this.#ticks = 0;
    if (this.#stop !== undefined) throw new BudgetStop(this.#stop.limit, "the analysis was stopped");
    if (this.#now() > (this.#trialDeadline ?? this.#deadline)) throw this.reached("time", "the time limit passed");
  }

  /** A limit was reached where the work cannot stop half-way: the error to throw. */
  reached(limit: Limit, message: string): BudgetStop {
    if (this.#trialDeadline !== undefined) return new ShareSpent(limit, message);
    this.#stopAt(limit, message);
    return new BudgetStop(limit, message);
  }

  /**
   * `f`, work that can be given up and done another way, with a share of the time left: past it, or past a limit where
   * the work cannot stop half-way (reached: the diagram's nodes), or past the stack, undefined, and no stop recorded
   * (the caller drops what `f` made). A stop that was recorded before, or an error of another kind, goes through.
   */
  trial<T>(f: () => T, share = TRIAL_SHARE): T | undefined {
    const outer = this.#trialDeadline;
    const now = this.#now();
    this.#trialDeadline = Math.min(outer ?? Infinity, now + (this.#deadline - now) * share);
    try {
      return f();
    } catch (err) {
      if (err instanceof ShareSpent || isResourceError(err)) return undefined;
      throw err;
    } finally {
      this.#trialDeadline = outer;
    }
  }

  /** A stop found outside (a BudgetStop caught, a stack that ran out), recorded as this budget's. */
  stopFor(limit: Limit): void {
    this.#stopAt(limit);
  }

  #stopAt(limit: Limit, message?: string): void {
    this.#stop ??= {
      limit,
      stage: this.#stage,
      done: this.#done,
      total: this.#total,
      unit: this.#unit,
      ...(message === undefined ? {} : { message }),
    };
  }

  #report(force: boolean, now = this.#now()): void {
    if (this.#progress === undefined || (!force && now - this.#lastReport < PROGRESS_EVERY_MS)) return;
    this.#lastReport = now;
    this.#progress({ stage: this.#stage, done: this.#done, total: this.#total, unit: this.#unit });
  }
}

/** Whether an error is the engine's "Maximum call stack size exceeded" or a collection past its largest size. */
export function isResourceError(err: unknown): boolean {
  return err instanceof RangeError && /call stack|maximum size|Invalid array length/i.test(err.message);
}

/**
 * `f`'s answer; when a BudgetStop or a resource error ends it (work that cannot stop half-way, past the budget:
 * recorded as the budget's stop if it was not), `cut(stop)`'s, which says what was cut short. Any other error goes
 * through.
 */
export function orCut<T>(budget: Budget, f: () => T, cut: (stop: Stop) => T): T {
  try {
    return f();
  } catch (err) {
    if (!(err instanceof BudgetStop) && !isResourceError(err)) throw err;
    budget.stopFor(err instanceof BudgetStop ? err.limit : "depth");
    const stop = budget.stopped;
    if (stop === undefined) throw err;
    return cut(stop);
  }
}
