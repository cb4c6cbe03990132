// The most worker threads `strata run --workers` takes: its own module, so that the command's
// definition (src/cli/commands/run.ts) states it without loading the workers.

/** The most worker threads `--workers` takes. */
export const WORKERS_MAX = 64;
