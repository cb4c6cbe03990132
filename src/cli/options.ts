// Parsers and defaults of flags that more than one module needs: the commands' definitions
// (commands/) and their implementations, which never import the definitions.

import { UsageError } from "../errors.js";

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A parser for a whole number from 1 to `max`; anything else is one line on stderr and exit 2. */
export function limit(flag: string, max: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v)) throw new UsageError(`${flag} ${v} is not a whole number (give 1 to ${max})`);
    const n = Number(v);
    if (n < 1) throw new UsageError(`${flag} ${v} is too small (at least 1)`);
    if (n > max) throw new UsageError(`${flag} ${v} is too large (at most ${max})`);
    return n;
  };
}

/** A parser for a bound that 0 lifts: a whole number from 0 to `max`; anything else is one line on stderr, exit 2. */
export function bound(flag: string, max: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v))
      throw new UsageError(`${flag} ${v} is not a whole number (give 0 for no bound, or 1 to ${max})`);
    const n = Number(v);
    if (n > max) throw new UsageError(`${flag} ${v} is too large (at most ${max}; 0 for no bound)`);
    return n;
  };
}

/** A parser for seconds that 0 lifts: a number from 0 to `max`, decimals allowed; anything else is exit 2. */
export function seconds(flag: string, max: number): (v: string) => number {
  return (v) => {
    if (!/^\d+(\.\d+)?$/.test(v))
      throw new UsageError(`${flag} ${v} is not a number of seconds (like 3 or 0.5; 0 for none)`);
    const n = Number(v);
    if (n > max) throw new UsageError(`${flag} ${v} is too large (at most ${max} seconds; 0 for no limit)`);
    return n;
  };
}

/** Bytes of trace.jsonl after which a serve's trace stops, unless told otherwise (--trace-max). */
export const TRACE_MAX_BYTES = 1e9;
