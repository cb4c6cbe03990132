// Where the CLI writes. main() takes an Io so tests can run commands in-process.

import type { Writable } from "node:stream";
import { printableOutput } from "../errors.js";

export interface Io {
  stdout: Sink;
  stderr: Sink;
  /** Whether stderr is a terminal (progress bars only then). */
  stderrIsTTY: boolean;
}

/** Buffered text output; flush() honours back-pressure and is awaited at batch boundaries. */
export interface Sink {
  write(text: string): void;
  flush(): Promise<void>;
}

const FLUSH_AT = 1 << 16;

/** A Sink over a Node stream (process.stdout, process.stderr): output is shown, not obeyed (printableOutput). */
export class StreamSink implements Sink {
  readonly #stream: Writable;
  #pending: string[] = [];
  #pendingLen = 0;
  /** Set when the reader went away (EPIPE): further output is discarded. */
  closed = false;

  constructor(stream: Writable) {
    this.#stream = stream;
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") this.closed = true;
      else throw err;
    });
  }

  write(text: string): void {
    if (this.closed) return;
    const shown = printableOutput(text);
    this.#pending.push(shown);
    this.#pendingLen += shown.length;
    if (this.#pendingLen >= FLUSH_AT) void this.flush();
  }

  async flush(): Promise<void> {
    if (this.#pending.length === 0 || this.closed) return;
    const text = this.#pending.join("");
    this.#pending = [];
    this.#pendingLen = 0;
    if (!this.#stream.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.#stream.off("drain", done);
          this.#stream.off("close", done);
          resolve();
        };
        this.#stream.on("drain", done);
        this.#stream.on("close", done);
      });
    }
  }
}

/** A Sink that keeps everything, for tests. */
export class MemorySink implements Sink {
  text = "";
  write(text: string): void {
    this.text += text;
  }
  async flush(): Promise<void> {}
}

export function memoryIo(): Io & { stdout: MemorySink; stderr: MemorySink } {
  return { stdout: new MemorySink(), stderr: new MemorySink(), stderrIsTTY: false };
}
