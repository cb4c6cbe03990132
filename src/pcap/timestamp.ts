// 64-bit timestamp units <-> (seconds, nanoseconds), exactly, without BigInt.
//
// A pcapng timestamp is a u64 count of 1/unitsPerSec, held here as two u32 halves
// (hi, lo). Division works on 16-bit chunks so every intermediate stays below 2^53
// and float arithmetic is exact; resolutions finer than 1 ns are truncated to ns.

const TWO_16 = 0x1_0000;
const TWO_32 = 0x1_0000_0000;
const TWO_21 = 0x20_0000;
const NS_PER_SEC = 1_000_000_000;

/** The if_tsresol byte: bit 7 clear = 10^-n seconds, set = 2^-n seconds. */
export const TSRESOL_BINARY = 0x80;
export const TSRESOL_DEFAULT = 6;

export interface TsResolution {
  readonly code: number;
  readonly unitsPerSec: number;
  /** n for 10^-n, else -1. */
  readonly decimalExp: number;
  /** n for 2^-n, else -1. */
  readonly binaryExp: number;
}

export function tsResolution(code: number): TsResolution {
  const exp = code & 0x7f;
  const binary = (code & TSRESOL_BINARY) !== 0;
  return {
    code,
    unitsPerSec: binary ? 2 ** exp : 10 ** exp,
    decimalExp: binary ? -1 : exp,
    binaryExp: binary ? exp : -1,
  };
}

/** The if_tsresol byte for a units-per-second value (powers of 10 preferred), or undefined. */
export function tsResolCode(unitsPerSec: number): number | undefined {
  for (let n = 0; n <= 9; n++) if (10 ** n === unitsPerSec) return n;
  for (let n = 1; n <= 63; n++) if (2 ** n === unitsPerSec) return TSRESOL_BINARY | n;
  return undefined;
}

// Results of divU64, kept in module scope so the hot path allocates nothing.
let qHi = 0;
let qLo = 0;
let rem = 0;

/** (hi·2^32 + lo) / d for 1 ≤ d ≤ 2^32: quotient into qHi/qLo, remainder into rem. */
function divU64(hi: number, lo: number, d: number): void {
  const q1 = Math.floor(hi / d);
  let r = hi - q1 * d;
  // r < d ≤ 2^32, so r·2^16 + chunk < 2^48: exact.
  let x = r * TWO_16 + (lo >>> 16);
  const q2 = Math.floor(x / d);
  r = x - q2 * d;
  x = r * TWO_16 + (lo & 0xffff);
  const q3 = Math.floor(x / d);
  rem = x - q3 * d;
  qHi = q1;
  qLo = q2 * TWO_16 + q3;
}

/** Converts timestamps of one resolution into a batch's tsSec/tsNsec arrays. */
export class TsConverter {
  readonly resolution: TsResolution;
  // The slow paths' results.
  #sec = 0;
  #nsec = 0;
  readonly #dec: number;
  readonly #bin: number;
  /** 10^n for n ≤ 9, else 0. */
  readonly #unitsPerSecSmall: number;
  /** 10^(9-n) when #unitsPerSecSmall is not 0. */
  readonly #nsPerUnit: number;

  constructor(code: number) {
    this.resolution = tsResolution(code);
    this.#dec = this.resolution.decimalExp;
    this.#bin = this.resolution.binaryExp;
    this.#unitsPerSecSmall = this.#dec >= 0 && this.#dec <= 9 ? 10 ** this.#dec : 0;
    this.#nsPerUnit = this.#unitsPerSecSmall === 0 ? 0 : NS_PER_SEC / this.#unitsPerSecSmall;
  }

  /** Stores the u64 timestamp (hi, lo), in this resolution's units, as sec[i] (plus offsetSec) and nsec[i]. */
  store(hi: number, lo: number, offsetSec: number, sec: Float64Array, nsec: Uint32Array, i: number): void {
    const units = this.#unitsPerSecSmall;
    if (units !== 0 && hi < TWO_21) {
      // Below 2^53 the whole count is an exact double: one division, corrected by at most one.
      const ts = hi * TWO_32 + lo;
      let s = Math.floor(ts / units);
      let r = ts - s * units;
      if (r < 0) {
        s -= 1;
        r += units;
      } else if (r >= units) {
        s += 1;
        r -= units;
      }
      sec[i] = s + offsetSec;
      nsec[i] = r * this.#nsPerUnit;
      return;
    }
    this.#split(hi, lo);
    sec[i] = this.#sec + offsetSec;
    nsec[i] = this.#nsec;
  }

  #split(hi: number, lo: number): void {
    const units = this.#unitsPerSecSmall;
    if (units !== 0) {
      divU64(hi, lo, units);
      this.#sec = qHi * TWO_32 + qLo;
      this.#nsec = rem * this.#nsPerUnit;
    } else if (this.#dec > 9) {
      this.#setFineDecimal(hi, lo);
    } else {
      this.#setBinary(hi, lo);
    }
  }

  /** 10^-n with n > 9: divide down to whole ns first (truncating), then split. */
  #setFineDecimal(hi: number, lo: number): void {
    let h = hi;
    let l = lo;
    for (let left = this.#dec - 9; left > 0; left -= 9) {
      divU64(h, l, 10 ** Math.min(left, 9));
      h = qHi;
      l = qLo;
    }
    divU64(h, l, NS_PER_SEC);
    this.#sec = qHi * TWO_32 + qLo;
    this.#nsec = rem;
  }

  /** 2^-n: seconds are a shift; nanoseconds are floor(frac · 10^9 / 2^n) by 16-bit limbs. */
  #setBinary(hi: number, lo: number): void {
    const n = this.#bin;
    let fracHi: number;
    let fracLo: number;
    if (n < 32) {
      this.#sec = hi * 2 ** (32 - n) + Math.floor(lo / 2 ** n);
      fracHi = 0;
      fracLo = lo % 2 ** n;
    } else if (n < 64) {
      this.#sec = Math.floor(hi / 2 ** (n - 32));
      fracHi = hi % 2 ** (n - 32);
      fracLo = lo;
    } else {
      this.#sec = 0;
      fracHi = hi;
      fracLo = lo;
    }
    this.#nsec = mulShift(fracHi, fracLo, NS_PER_SEC, n);
  }
}

/** floor((hi·2^32 + lo) · m / 2^shift) for m < 2^32, when the result is below 2^53. */
function mulShift(hi: number, lo: number, m: number, shift: number): number {
  const limbs = [lo & 0xffff, lo >>> 16, hi & 0xffff, hi >>> 16, 0, 0];
  let carry = 0;
  for (let i = 0; i < limbs.length; i++) {
    const t = (limbs[i] ?? 0) * m + carry;
    limbs[i] = t % TWO_16;
    carry = Math.floor(t / TWO_16);
  }
  let result = 0;
  for (let i = 0; i < limbs.length; i++) {
    const bit = i * 16 - shift;
    const limb = limbs[i] ?? 0;
    if (bit >= 0) result += limb * 2 ** bit;
    else if (bit > -16) result += Math.floor(limb / 2 ** -bit);
  }
  return result + carry * 2 ** (limbs.length * 16 - shift);
}

// Results of unitsFromTs.
export let unitsHi = 0;
export let unitsLo = 0;

/**
 * The u64 timestamp for (sec, nsec) in units of `res`, into unitsHi/unitsLo; rounds
 * down to the unit. Inverse of TsConverter for every value TsConverter produces
 * (resolutions up to 1 ns and 2^-29). Throws RangeError if it does not fit in 64 bits.
 */
export function unitsFromTs(sec: number, nsec: number, res: TsResolution): void {
  let frac: number;
  if (res.decimalExp >= 0) {
    if (res.decimalExp > 9)
      throw new RangeError(`if_tsresol 10^-${res.decimalExp} is finer than the 1 ns a timestamp holds`);
    frac = Math.floor(nsec / 10 ** (9 - res.decimalExp));
  } else {
    const n = res.binaryExp;
    if (n > 29) throw new RangeError(`if_tsresol 2^-${n} is finer than the 1 ns a timestamp holds`);
    // ceil inverts floor(frac·10^9/2^n) exactly; step back one when nsec was not such an image.
    const shifted = 2 ** (32 - n);
    divU64(Math.floor(nsec / shifted), (nsec % shifted) * 2 ** n, NS_PER_SEC);
    frac = qHi * TWO_32 + qLo + (rem > 0 ? 1 : 0);
    if (mulShift(0, frac, NS_PER_SEC, n) !== nsec) frac -= 1;
  }
  mulAdd(sec, res.unitsPerSec, frac);
}

/** x·m + add into unitsHi/unitsLo, for 0 ≤ x < 2^53, m ≤ 2^32, add < 2^32. */
function mulAdd(x: number, m: number, add: number): void {
  if (!(x >= 0) || !Number.isSafeInteger(x)) throw new RangeError(`timestamp seconds ${x} is not a whole number ≥ 0`);
  let carry = add;
  const out = [0, 0, 0, 0];
  let rest = x;
  for (let i = 0; i < 4; i++) {
    const chunk = rest % TWO_16;
    rest = Math.floor(rest / TWO_16);
    const t = chunk * m + carry;
    out[i] = t % TWO_16;
    carry = Math.floor(t / TWO_16);
  }
  if (carry !== 0) throw new RangeError(`timestamp ${x} s does not fit in 64 bits of 1/${m} s`);
  unitsLo = (out[1] ?? 0) * TWO_16 + (out[0] ?? 0);
  unitsHi = (out[3] ?? 0) * TWO_16 + (out[2] ?? 0);
}
