// Loading the data plane: the one place that instantiates the wasm module.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { instantiateSync } from "@assemblyscript/loader";
import { LinearMemory } from "./memory.js";

/** The raw exports of assembly/index.ts, as the TypeScript side sees them. Addresses are numbers. */
export interface DataPlaneExports extends Record<string, unknown> {
  memory: WebAssembly.Memory;
  alloc(size: number): number;
  free(ptr: number): void;
  // header designs
  designParse(design: number, p: number, len: number, key: number): number;
  designEmitLen(design: number, key: number): number;
  designEmit(design: number, p: number, key: number, payloadLen: number): void;
  designDecrementTtl(design: number, p: number): number;
  designTemplate(design: number, key: number, tp: number): number;
  designWriteTemplate(tp: number, p: number, payloadLen: number, block: number): void;
  // tables
  FIELD_LEN: WebAssembly.Global;
  createTable(
    id: number,
    role: number,
    kind: number,
    keyLen: number,
    capacity: number,
    fields: number,
    nFields: number,
  ): number;
  applyWrites(buf: number, n: number): number;
  destroyTable(id: number): number;
  tableLookup(id: number, key: number): number;
  tableCount(id: number): number;
  tableProbeDistance(id: number): number;
  tableDirBytes(id: number): number;
  tableHits(id: number, out: number): number;
  tableEntry(id: number, i: number, out: number): number;
  tableLookupAction(id: number, key: number, out: number): number;
  // topology
  topologyReset(members: number, links: number, endpoints: number): void;
  memberSet(i: number, network: number, machine: number, design: number, flags: number, nOutLinks: number): void;
  memberSetTable(i: number, role: number, table: number): number;
  linkSet(
    i: number,
    network: number,
    design: number,
    sender: number,
    senderOutLink: number,
    mode: number,
    nReceivers: number,
    recorded: number,
  ): void;
  memberSetOutLink(i: number, outLink: number, link: number): void;
  linkSetReceiver(i: number, r: number, member: number, inLink: number): void;
  endpointSet(i: number, kind: number, member: number, arg: number, link: number): void;
  linkSetRecording(i: number, c: number): void;
  memberSetRecording(i: number, c: number): void;
  linkSetDown(i: number, down: number): void;
  memberSetDown(i: number, down: number): void;
  memberTagDeliveries(i: number, on: number): void;
  endpointsGrow(e: number): void;
  recordingsInit(n: number, len: number): void;
  recordingsGather(): number;
  recordingsDrained(): void;
  countersReset(): void;
  memberDrops(i: number): number;
  memberDelivered(i: number): number;
  packetsInjected(): number;
  packetsCopied(): number;
  linkPackets(i: number): number;
  linkBytes(i: number): number;
  // running
  poolInit(count: number, len: number, headroom: number): void;
  traceInit(events: number): void;
  setTracing(on: number): void;
  traceOnly(): void;
  traceRange(first: number, last: number): void;
  drained(): void;
  stackInit(capacity: number, copyLimit: number): void;
  setHopLimit(n: number): void;
  inputInit(packets: number, bytes: number): void;
  setMaxFanout(n: number): void;
  run(n: number, first: number, base: number): number;
  resume(): number;
  /** Whether the staged packets' bytes lie apart, each its own to write in place (assembly/pipeline/run.ts). */
  setInputWritable(writable: number): void;
  /** Fills the input arrays from the pcap records in the input data [start, end) (assembly/input.ts); how many. */
  inputPcap(start: number, end: number, flags: number, capLimit: number, max: number, endpoint: number): number;
  /** Where the last inputPcap stopped. */
  inputPcapEnd(): number;
  region(which: number): number;
  /** The descriptor of the packet the batch holds (a paused run's); its fields at PACKET_MEMBER, PACKET_IN_LINK … */
  heldPacket(): number;
  STATUS_DONE: WebAssembly.Global;
  STATUS_PAUSED: WebAssembly.Global;
  PCAP_BIG_ENDIAN: WebAssembly.Global;
  PCAP_NANOSECOND: WebAssembly.Global;
  PACKET_SIZE: WebAssembly.Global;
}

/**
 * release and debug: the data plane; bound: the same with the bench's bound
 * kernels beside it (assembly/bound, for `npm run bench:bound` and its test).
 */
export type Build = "release" | "debug" | "bound";

/** build/<name>.wasm, found relative to this file in src/ and in dist/src/. */
export function wasmPath(build: Build): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.includes("/dist/")
    ? here.slice(0, here.lastIndexOf("/dist/"))
    : here.slice(0, here.lastIndexOf("/src/"));
  return `${root}/build/${build}.wasm`;
}

const compiled = new Map<Build, WebAssembly.Module>();

function compile(build: Build): WebAssembly.Module {
  let module = compiled.get(build);
  if (module === undefined) {
    const path = wasmPath(build);
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = new Uint8Array(readFileSync(path));
    } catch {
      throw new Error(`the data plane is not built (${path} is missing): run \`npm run build\``);
    }
    module = new WebAssembly.Module(bytes);
    compiled.set(build, module);
  }
  return module;
}

/** A fresh instance of the data plane, with its own linear memory. */
export class DataPlane {
  readonly exports: DataPlaneExports;
  readonly mem: LinearMemory;

  private constructor(exports: DataPlaneExports) {
    this.exports = exports;
    this.mem = new LinearMemory(exports.memory);
  }

  static load(build: Build = "release"): DataPlane {
    const { exports } = instantiateSync<DataPlaneExports>(compile(build), {});
    return new DataPlane(exports);
  }

  /** Allocates `size` zeroed bytes in linear memory (may grow it). */
  alloc(size: number): number {
    return this.exports.alloc(size) >>> 0;
  }

  free(ptr: number): void {
    this.exports.free(ptr);
  }

  /** A constant exported by the module (layout sizes, codes). */
  constant(name: string): number {
    const g = this.exports[name];
    if (!(g instanceof WebAssembly.Global)) throw new Error(`the data plane exports no constant ${name}`);
    return g.value as number;
  }
}
