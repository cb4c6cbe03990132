// bench:instructions' exact count: callgrind's per-address counts joined with V8's wasm listing; which kernel a
// SCENARIO:bound name drives.

import { describe, expect, it } from "vitest";
import { kernelOf, wasmAddresses, wasmCount } from "../../bench/instructions.js";

const LISTING = `--- WebAssembly code ---
name: wasm-function[3]
Instructions (size = 12)
0x1000     0  55                   push rbp
0x1001     1  4889e5               REX.W movq rbp,rsp
0x1004     4  c3                   retl
name: wasm-function[4]
0x2000     0  90                   nop
Source positions:
 pc offset  position
`;

describe("wasmAddresses", () => {
  it("takes every instruction line of the listing, and nothing else", () => {
    expect([...wasmAddresses(LISTING)]).toEqual([0x1000n, 0x1001n, 0x1004n, 0x2000n]);
  });
});

describe.each([
  { case: "absolute addresses", profile: "fn=(1) 0x1000\n0x1000 0 5\n0x1001 0 5\n0x3000 0 9\n", want: 10 },
  {
    case: "relative addresses (+n, -n, *) in decimal and hex",
    profile: "fn=(1)\n0x1000 0 2\n+1 0 3\n+0x3 0 4\n-3 0 1\n* 0 1\n",
    want: 11,
  },
  {
    case: "a call's inclusive cost is not the caller's",
    profile: "0x1000 0 1\ncalls=1 0x5000 0\n+4 0 1000\n0x2000 0 7\n",
    want: 8,
  },
  { case: "code outside the listing", profile: "0x5000 0 100\n+1 0 100\n", want: 0 },
])("wasmCount: $case", ({ profile, want }) => {
  it(`counts ${want}`, () => {
    expect(wasmCount(`version: 1\nevents: Ir\n${profile}totals: 0\n`, wasmAddresses(LISTING))).toBe(want);
  });
});

describe.each([
  { name: "router-layered:bound", want: "KERNEL_ROUTER" },
  { name: "vxlan:bound", want: "KERNEL_VXLAN" },
  { name: "l2-exact:bound", want: "KERNEL_L2" },
  { name: "router-layered", want: undefined },
  { name: "fat-tree:bound", want: undefined },
  { name: ":bound", want: undefined },
])("kernelOf($name)", ({ name, want }) => {
  it(`is ${want ?? "no kernel: the data plane"}`, () => {
    expect(kernelOf(name)?.kernel).toBe(want);
  });
});
