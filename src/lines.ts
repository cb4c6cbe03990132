// Lines of a byte stream, each held to a bound. A line longer than the bound
// is never held whole: it comes out as a problem with its number as soon as it
// passes the bound (so a reader that stops there stops, even on a stream with
// no newline at all), its bytes are let go as they come up to its newline, and
// the next line reads as usual. So what a reader holds is a line of at most
// `limit` bytes (and the chunk it arrived in), whatever the input. Used by
// every reader of lines a person or another program gives strata: `serve
// --commands` (stdin), `strata trace` and `strata view --run`'s trace.

/** A line read: its text (without "\n" or "\r\n"), or, when it was longer than the limit, only that. Numbered from 1.
 * */
export type Line =
  | { readonly ok: true; readonly number: number; readonly text: string }
  | { readonly ok: false; readonly number: number };

/** Splits bytes into Lines: push() each chunk as it comes, then end(). */
export class LineSplitter {
  /** The most bytes a line may have, its "\n" or "\r\n" not counted. */
  readonly limit: number;
  readonly #parts: Buffer[] = [];
  /** Bytes of the line so far, while it is held. */
  #held = 0;
  /** The line being read is over the limit, and said to be: its bytes are dropped up to its newline. */
  #over = false;
  #number = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a line limit of ${limit} bytes`);
    this.limit = limit;
  }

  /** Bytes of the line being read that are held now: never more than limit + 1. */
  get held(): number {
    return this.#held;
  }

  /** The lines that `chunk` ends (a line may span chunks), and a line over the limit when it passes it. */
  push(chunk: Uint8Array | string): Line[] {
    const bytes =
      typeof chunk === "string"
        ? Buffer.from(chunk)
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: Line[] = [];
    for (let start = 0; ;) {
      const newline = bytes.indexOf(10, start);
      const over = this.#take(bytes, start, newline < 0 ? bytes.length : newline);
      if (over !== undefined) lines.push(over);
      if (newline < 0) return lines;
      if (this.#over) this.#over = false;
      else lines.push(this.#end());
      start = newline + 1;
    }
  }

  /** The last line, when the input ended after some bytes without a newline. */
  end(): Line[] {
    if (this.#over) {
      this.#over = false;
      return [];
    }
    return this.#held > 0 ? [this.#end()] : [];
  }

  /** Holds bytes [start, end) of the line; the line as a problem when they take it past the limit. */
  #take(bytes: Buffer, start: number, end: number): Line | undefined {
    if (this.#over || end === start) return undefined;
    // One byte more than the limit may still be a line's "\r".
    if (this.#held + (end - start) > this.limit + 1) {
      this.#over = true;
      this.#parts.length = 0;
      this.#held = 0;
      return { ok: false, number: ++this.#number };
    }
    this.#parts.push(bytes.subarray(start, end));
    this.#held += end - start;
    return undefined;
  }

  /** The line held, ended by a newline or the input's end. */
  #end(): Line {
    const number = ++this.#number;
    const whole = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#held);
    this.#parts.length = 0;
    this.#held = 0;
    const len = whole.length > 0 && whole[whole.length - 1] === 13 ? whole.length - 1 : whole.length;
    if (len > this.limit) return { ok: false, number };
    return { ok: true, number, text: whole.toString("utf8", 0, len) };
  }
}

/** The Lines of `input` (a file or stdin stream), each of at most `limit` bytes. */
export async function* readLines(input: AsyncIterable<Uint8Array | string>, limit: number): AsyncGenerator<Line> {
  const split = new LineSplitter(limit);
  for await (const chunk of input) yield* split.push(chunk);
  yield* split.end();
}
