// `--trace-packets RANGES`: which packets a trace holds. RANGES is a list
// joined by commas of N (one packet), N-M (N to M, both in) and N- (N to the
// end), numbered from 0 as `strata trace` numbers them: `0-999`,
// `5,17,100-200`, `1000000-`. The data plane takes them (Runner's
// tracePackets) and records events only for those packets: the others take
// the fast lane as without a trace.

import { excerpt, UsageError } from "../errors.js";
import type { PacketRanges } from "../wasm/runner.js";

/** The data plane numbers packets in 32 bits. */
export const PACKET_NUMBER_MAX = 2 ** 32 - 1;

/** The flag's help, for strata run and strata serve. */
export const TRACE_PACKETS_HELP =
  "trace only these packets, numbered from 0: N, N-M or N- (to the end), " +
  "joined by commas, e.g. 0-999,5000 (implies --trace)";

const SYNTAX = "write packet numbers as N, N-M or N-, joined by commas, e.g. 0-999,5000,10000-";

/** The ranges RANGES names, merged and in order; UsageError for anything else. */
export function parsePacketRanges(text: string, flag = "--trace-packets"): PacketRanges {
  const bad = (problem: string, fix = SYNTAX): UsageError =>
    new UsageError(`${flag} ${excerpt(text)}: ${problem} (${fix})`);
  const number = (digits: string): number => {
    const n = Number(digits);
    if (n > PACKET_NUMBER_MAX)
      throw bad(
        `${excerpt(digits)} is past the last packet number, ${PACKET_NUMBER_MAX}`,
        "packets are numbered in 32 bits",
      );
    return n;
  };
  const ranges = text.split(",").map((item): [number, number] => {
    const m = /^\s*(\d+)\s*(?:(-)\s*(\d+)?)?\s*$/.exec(item);
    if (m === null)
      throw bad(item.trim() === "" ? "an empty item" : `'${excerpt(item.trim())}' is not a packet number or range`);
    const first = number(m[1] ?? "");
    const last = m[2] === undefined ? first : m[3] === undefined ? PACKET_NUMBER_MAX : number(m[3]);
    if (last < first) throw bad(`${first}-${last} ends before it starts`, `write ${last}-${first}`);
    return [first, last];
  });
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of ranges) {
    const previous = merged.at(-1);
    if (previous !== undefined && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  return merged;
}

/** Whether `packet` is in `ranges`. */
export function inRanges(ranges: PacketRanges, packet: number): boolean {
  return ranges.some(([first, last]) => packet >= first && packet <= last);
}
