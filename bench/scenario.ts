// What a benchmark scenario is. Scenarios are listed in scenarios.ts; main.ts times them.

export interface Scenario {
  /** Short kebab-case name, for `--only`. */
  readonly name: string;
  /** One line on what is measured. */
  readonly description: string;
  /** Packets one run() handles. */
  readonly packets: number;
  /** Bytes one run() handles, when MB/s means something (known after setup). */
  readonly bytes?: number;
  /** Prepares inputs (may be slow: it is not timed). */
  setup(): void | Promise<void>;
  /** The timed work: must handle `packets` packets, synchronously. */
  run(): void;
  teardown?(): void | Promise<void>;
  /** Why the scenario cannot run here (a tool it needs is missing): it is left out, saying so. */
  unavailable?(): string | undefined;
  /**
   * Work benchmark.js cannot time (it runs in other processes): one run of `packets` packets,
   * timed by the scenario itself, in seconds. Such a scenario's `run` is not called.
   */
  timedRun?(): Promise<number>;
  /**
   * The same program, entries and packets on bmv2's simple_switch: reported as `vsBmv2`, this
   * scenario's speed over its.
   */
  readonly bmv2?: Scenario;
  /**
   * The same work done by the plain TypeScript interpreter of the model
   * (src/model): reported as `vsReference`, this scenario's speed over its.
   */
  readonly reference?: Scenario;
}

/** A figure a FigureScenario measured, with the goal it is held to (if any). */
export interface Figure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly goal?: { readonly value: number; readonly better: "lower" | "higher" };
}

/**
 * A scenario that times its own work and reports figures of its own (latencies, rates):
 * work that is not packets through a synchronous run(), such as a server and its client in
 * this process, talking through the event loop.
 */
export interface FigureScenario {
  readonly name: string;
  readonly description: string;
  figures(): Promise<Figure[]>;
}
