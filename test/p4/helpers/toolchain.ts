// The P4 reference toolchain for the tests (bench/p4/toolchain.ts finds it). Where it is missing
// (a bare clone), the tests skip, saying why; with STRATA_REQUIRE_P4=1 (CI sets it) missing
// tools fail the tests instead.

export { findP4Tools, type P4Tools } from "../../../bench/p4/toolchain.js";

/** Whether missing tools fail the tests (CI) rather than skip them. */
export const P4_REQUIRED = process.env["STRATA_REQUIRE_P4"] === "1";
