// The bench's bound build (build/bound.wasm): the data plane, every export of
// it, and the bound kernels beside it (kernels.ts). Never loaded but by
// `npm run bench:bound` and its test.

export * from "../index";
export { boundRun, KERNEL_HUB, KERNEL_L2, KERNEL_ROUTER, KERNEL_VXLAN } from "./kernels";
