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
  teardown?(): void;
  /**
   * The same work done by the plain TypeScript interpreter of the model
   * (src/model): reported as `vsReference`, this scenario's speed over its.
   */
  readonly reference?: Scenario;
}
