// bench/stats.ts: the median and quantiles every scenario reports, against values worked by hand.

import { describe, expect, it } from "vitest";
import { median, quantile } from "../../bench/stats.js";

const hundredToOne = Array.from({ length: 200 }, (_, i) => 200 - i); // 200, 199, …, 1: unsorted on purpose

describe("bench/stats.ts", () => {
  it.each([
    { what: "median of an odd count, any order", got: () => median([5, 1, 3]), want: 3 },
    { what: "median of an even count: the mean of the middle two", got: () => median([4, 1, 3, 2]), want: 2.5 },
    { what: "median of one", got: () => median([7]), want: 7 },
    { what: "median of none", got: () => median([]), want: Number.NaN },
    { what: "p99 of 1..200: the 199th smallest", got: () => quantile(hundredToOne, 0.99), want: 199 },
    { what: "p90 of 1..200: the 181st smallest", got: () => quantile(hundredToOne, 0.9), want: 181 },
    { what: "p99 of three: the largest", got: () => quantile([3, 1, 2], 0.99), want: 3 },
    { what: "a quantile of none", got: () => quantile([], 0.5), want: Number.NaN },
  ])("$what", ({ got, want }) => {
    expect(got()).toBe(want);
  });

  it("leaves its samples as they were", () => {
    const samples = [3, 1, 2];
    median(samples);
    quantile(samples, 0.5);
    expect(samples).toEqual([3, 1, 2]);
  });
});
