// bench:where's joins: a wasm module's function bodies, a source map's lines, and V8's listing with its source
// positions, each on an input small enough to work by hand.

import { describe, expect, it } from "vitest";
import { bodyStarts, linesOf, sourceLines } from "../../bench/where.js";

// A module: one imported function, then two defined ones, each body `0 locals, end`.
// Offsets: header 0–7; type section 8–13; import section 14–22; function section 23–27; code section from 28,
// its count at 30, the first body's size at 31 (body at 32), the second's at 34 (body at 35).
const MODULE = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...[0x01, 0x04, 0x01, 0x60, 0x00, 0x00],
  ...[0x02, 0x07, 0x01, 0x01, 0x6d, 0x01, 0x66, 0x00, 0x00],
  ...[0x03, 0x03, 0x02, 0x00, 0x00],
  ...[0x0a, 0x07, 0x02, 0x02, 0x00, 0x0b, 0x02, 0x00, 0x0b],
]);

describe("bodyStarts", () => {
  it("numbers bodies after the imported functions", () => {
    expect([...bodyStarts(MODULE)]).toEqual([
      [1, 32],
      [2, 35],
    ]);
  });
});

describe("sourceLines", () => {
  it.each([
    { name: "one segment", mappings: "AAAA", want: [[0, "a.ts:1"]] },
    {
      name: "relative columns, sources and lines",
      mappings: "AAAA,EACE,CCDA",
      want: [
        [0, "a.ts:1"],
        [2, "a.ts:2"],
        [3, "b.ts:1"],
      ],
    },
    {
      name: "a segment without a source is skipped",
      mappings: "AAAA,C,CAAC",
      want: [
        [0, "a.ts:1"],
        [2, "a.ts:1"],
      ],
    },
  ])("$name", ({ mappings, want }) => {
    expect(sourceLines({ sources: ["a.ts", "b.ts"], mappings })).toEqual(want);
  });
});

describe("linesOf", () => {
  const listing = `--- WebAssembly code ---
name: wasm-function[2]
index: 2
Instructions (size = 8)
0x1000     0  55                   push rbp
0x1004     4  c3                   retl
0x1006     6  90                   nop
Source positions:
 pc offset  position
         0         0
         4         3
--- WebAssembly code ---
name: wasm-function[9]
index: 9
0x2000     0  90                   nop
`;
  it("takes each instruction to the line of its function's last source position at or before it", () => {
    const lines: [number, string][] = [
      [35, "a.ts:1"],
      [38, "a.ts:7"],
    ];
    expect([...linesOf(listing, bodyStarts(MODULE), lines)]).toEqual([
      [0x1000n, "a.ts:1"],
      [0x1004n, "a.ts:7"],
      [0x1006n, "a.ts:7"],
      [0x2000n, "wasm-function[9]"],
    ]);
  });
});
