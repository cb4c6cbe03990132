// Reading trace.jsonl back (src/engine/trace.ts writes it): every line checked, as `strata trace` and
// `strata view --run` read it.

import { createReadStream } from "node:fs";
import { describeIoError, InputError } from "../errors.js";
import { type Line, readLines } from "../lines.js";
import { sizeText } from "../read-file.js";
import { checkTraceLine, TRACE_LINE_MAX, type TraceLine } from "../engine/trace.js";

const EDITED = "the file was cut or edited; replay again";
export const TRACE_LINE_MAX_TEXT = sizeText(TRACE_LINE_MAX);
/** Bytes a read of the trace takes at a time: its lines run to megabytes, and the stream's default of 64 KiB took two
 * fifths more CPU to pass over a line of 64 MiB (0.68-0.82 s against 0.49-0.57 s, AMD EPYC). */
const READ_BYTES = 1 << 20;

/**
 * Every line of the trace `file` (empty lines passed over), checked: InputError for a line that is
 * not a trace line as `strata run --trace` writes it, or longer than `lineMax` (TRACE_LINE_MAX unless a test sets a
 * smaller one), and for a file that cannot be read.
 */
export async function* readTrace(
  file: string,
  lineMax = TRACE_LINE_MAX,
): AsyncGenerator<{ readonly text: string; readonly line: TraceLine }> {
  for await (const line of readable(readLines(createReadStream(file, { highWaterMark: READ_BYTES }), lineMax), file)) {
    const n = line.number;
    if (!line.ok)
      throw new InputError(file, `line ${n}`, `longer than ${sizeText(lineMax)}, the most a trace line holds`, EDITED);
    if (line.text === "") continue;
    yield { text: line.text, line: parseTraceLine(line.text, file, n) };
  }
}

/** Line `n` of the trace `file`, checked: InputError when it is not a trace line. */
export function parseTraceLine(text: string, file: string, n: number): TraceLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(file, `line ${n}`, "not a JSON trace line", EDITED);
  }
  const checked = checkTraceLine(value);
  if (!checked.ok) throw new InputError(file, `line ${n}`, checked.problem, EDITED);
  return checked.value;
}

/** The lines of the trace; a file that cannot be read (a directory, no permission) is bad input. */
async function* readable(lines: AsyncIterable<Line>, file: string): AsyncGenerator<Line> {
  try {
    yield* lines;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err;
    throw new InputError(
      file,
      "",
      `cannot read the trace: ${describeIoError(err)}`,
      "replay with `strata run … --trace` to write it again",
    );
  }
}
