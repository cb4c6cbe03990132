// The data plane's exports: everything the TypeScript side may call.
export { alloc, free } from "./memory";
export { checksumBatch, PACKET_REF_LEN } from "./batch";
