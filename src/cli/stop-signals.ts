// Ctrl-C (SIGINT) and SIGTERM for the commands that run until they are stopped (strata serve,
// strata p4runtime): the first asks the command to stop cleanly; one more while it stops ends
// the process at once with 130. A command installs them before it says it is up, so that a
// signal right after that line is never Node's default (death by the signal, no summary).

import { EXIT_INTERRUPTED } from "./command.js";

export class StopSignals {
  /** Resolves at the first SIGINT or SIGTERM, or at stop(). */
  readonly stopped: Promise<void>;
  #stopping = false;
  readonly #resolve: () => void;
  readonly #onSignal = (): void => {
    if (this.#stopping) process.exit(EXIT_INTERRUPTED);
    this.stop();
  };

  constructor() {
    let resolve = (): void => {};
    this.stopped = new Promise<void>((r) => {
      resolve = r;
    });
    this.#resolve = resolve;
    process.on("SIGINT", this.#onSignal);
    process.on("SIGTERM", this.#onSignal);
  }

  /** The command stops for another reason (a `stop` command): a signal from now on ends it at once. */
  stop(): void {
    this.#stopping = true;
    this.#resolve();
  }

  /** Gives the signals back to Node; call once the command has stopped (a signal after it ends the process). */
  dispose(): void {
    process.off("SIGINT", this.#onSignal);
    process.off("SIGTERM", this.#onSignal);
  }
}
