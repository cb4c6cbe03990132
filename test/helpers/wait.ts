// Waiting in a test for what must happen (a line printed, a file reloaded, a counter moved):
// until it happens, however long a busy machine takes, and only then a limit — one that catches
// a hang, never a budget (issue 29: the suite passes at load 15 on 2 cores, where a process runs
// eight times slower and more). A test never sleeps for what it could wait for.

/** How long a test waits for what must happen before taking it for a hang. */
export const HANG_MS = 60_000;

/**
 * How long a test or hook may take before vitest takes it for hung (vitest.config.ts): about four
 * times what the longest took beside two busy processes at load 15 on 2 cores (the bench scenario
 * l2-exact-64k, 78 s). A test whose work grows with a setting (STRATA_DIFF_RUNS,
 * STRATA_P4_RANDOM_RUNS) takes more, in proportion.
 */
export const TEST_MS = 300_000;

/**
 * Asks `check` every few milliseconds until it returns (or resolves to) something that is not
 * undefined, null or false, and returns that; throws `what` (what never happened, and what was
 * seen) after `ms`.
 */
export async function until<R>(
  check: () => R | Promise<R>,
  what: () => string,
  ms = HANG_MS,
): Promise<Exclude<R, undefined | null | false>> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got !== undefined && got !== null && got !== false) return got as Exclude<R, undefined | null | false>;
    if (Date.now() > end) throw new Error(`after ${ms / 1000} s: ${what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
