// How long a stopping P4Runtime server waits: its own module, so that the help of `strata p4runtime`
// and `strata serve` (src/cli/commands/) quotes it without loading gRPC.

/** How long open calls and streams have to end when the server stops before they are cancelled (docs/cli.md). */
export const CLOSE_GRACE_MS = 1000;
