// strata's version (package.json's: test/queue/protocol.test.ts holds them equal): `strata --version`, and what a
// queue worker compares with a coordinator's before it runs a chunk (src/queue/protocol.ts).

export const STRATA_VERSION = "0.1.0";
