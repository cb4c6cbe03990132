// Capture records read straight into the input area: the TypeScript side reads
// a block of a classic pcap file into inData (src/wasm/input-blocks.ts), and
// this pass fills the input arrays from the record headers, so a replay does
// no work per packet outside wasm and copies no packet bytes before the run.
//
//   inData: │ rec hdr 16 │ bytes … │ rec hdr 16 │ bytes … │ … │ part of a record │
//             ts_sec ts_frac incl_len orig_len (the file's byte order)
//
// It stops before a record that is not whole in the block, or whose length is
// over the limit (the TypeScript reader then says what is wrong, as it does
// alone), and after `max` records.

import { PCAP_REC_CAP_LEN, PCAP_REC_LEN, PCAP_REC_ORIG_LEN, PCAP_REC_TS_FRAC, PCAP_REC_TS_SEC } from "./abi";
import { inData, inEndpoint, inLen, inNsec, inOffset, inOrigLen, inSec, setInputWritable } from "./pipeline/run";

/** Flags of inputPcap: the file's byte order and timestamp unit (its magic). */
export const PCAP_BIG_ENDIAN: u32 = 1;
export const PCAP_NANOSECOND: u32 = 2;

/** The byte after the last record inputPcap took. */
let parsedEnd: u32 = 0;

@inline function field(at: usize, swap: bool): u32 {
  const v = load<u32>(at);
  return swap ? bswap<u32>(v) : v;
}

/**
 * Fills the input arrays from the pcap records in inData[start, end), at most
 * `max` of them, every one entering at `endpoint`; returns how many. Offsets
 * are relative to inData (run with base 0). inputPcapEnd() is where it stopped.
 */
export function inputPcap(start: u32, end: u32, flags: u32, capLimit: u32, max: i32, endpoint: u32): i32 {
  const swap = (flags & PCAP_BIG_ENDIAN) != 0;
  const nano = (flags & PCAP_NANOSECOND) != 0;
  const fracPerSec: u32 = nano ? 1_000_000_000 : 1_000_000;
  const nsPerFrac: u32 = nano ? 1 : 1000;
  let pos = start;
  let n = 0;
  while (n < max && end - pos >= <u32>PCAP_REC_LEN) {
    const rec = inData + <usize>pos;
    const capLen = field(rec + PCAP_REC_CAP_LEN, swap);
    if (capLen > capLimit || end - pos - <u32>PCAP_REC_LEN < capLen) break;
    let sec = field(rec + PCAP_REC_TS_SEC, swap);
    let frac = field(rec + PCAP_REC_TS_FRAC, swap);
    // Some writers let the fraction reach a whole second: carried, as the TypeScript reader does.
    if (frac >= fracPerSec) {
      sec += frac / fracPerSec;
      frac %= fracPerSec;
    }
    const o = (<usize>n) << 2;
    store<u32>(inOffset + o, pos + <u32>PCAP_REC_LEN);
    store<u32>(inLen + o, capLen);
    store<u32>(inOrigLen + o, field(rec + PCAP_REC_ORIG_LEN, swap));
    store<u32>(inSec + o, sec);
    store<u32>(inNsec + o, frac * nsPerFrac);
    store<u32>(inEndpoint + o, endpoint);
    pos += <u32>PCAP_REC_LEN + capLen;
    n++;
  }
  parsedEnd = pos;
  setInputWritable(true); // records lie apart, and are run once: each packet may be written in place
  return n;
}

export function inputPcapEnd(): u32 {
  return parsedEnd;
}
