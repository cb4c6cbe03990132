// Knobs for the tests and for tuning, read from the environment when they are used (a test sets one and runs strata in
// the same process): the sizes past which strata starts a thread beside the data plane. Unset, the default holds.
//
//   STRATA_WRITER_THREAD_AFTER  bytes of recordings after which the file writer's thread writes them (src/engine)
//   STRATA_READER_THREAD_AFTER  bytes of capture at least, for a thread to read it ahead of the data plane (src/run)
//
// 0 starts the thread from the first byte; `never` never starts it.

import { UsageError } from "./errors.js";

export const TUNING_KNOBS = ["STRATA_WRITER_THREAD_AFTER", "STRATA_READER_THREAD_AFTER"] as const;
export type TuningKnob = (typeof TUNING_KNOBS)[number];

/** The knob's bytes (Infinity for `never`), or `fallback` when it is unset; a UsageError when it is not a size. */
export function tunedBytes(knob: TuningKnob, fallback: number): number {
  const text = process.env[knob];
  if (text === undefined || text === "") return fallback;
  if (text === "never") return Infinity;
  if (!/^\d{1,15}$/.test(text)) throw new UsageError(`${knob}: "${text}" is not a size (a number of bytes, or never)`);
  return Number(text);
}
