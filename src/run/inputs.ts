// Captures as input to a network: each file is opened, checked against the
// network's header design, adapted where a link-layer wrapper is not part of
// the design (Linux cooked headers, BSD loopback, Ethernet in front of IP, a
// trailing FCS), and, when there are several, merged into one stream in
// timestamp order. Batches come out in the data plane's InputBatch shape.
// An input that is damaged part-way (or brings a link type the network cannot
// take) ends there, after its good packets; the others go on to their end.

import type { ResolvedEndpoint } from "../control/endpoints.js";
import type { InputStats } from "../engine/summary.js";
import { InputError } from "../errors.js";
import { LINKTYPE, linkTypeName, openCapture, PACKET_NO_TIMESTAMP } from "../pcap/index.js";
import type { CaptureReader, InterfaceInfo, PacketBatch, PcapBlocks } from "../pcap/index.js";
import type { InputBatch } from "../wasm/runner.js";
import type { BlockInput } from "./blocks.js";
import type { DesignDef } from "../wire/designs.js";

export interface InputFile {
  /** The endpoint as written, for messages and the summary. */
  readonly endpoint: string;
  readonly file: string;
  /** Index of the injection point in the data plane. */
  readonly injection: number;
  readonly design: DesignDef;
  /** Sent in a session: the packets are payload, the send table adds the header; any link type will do. */
  readonly payload: boolean;
}

/** How a capture's frames become packets of a design. */
interface Adaptation {
  /** Bytes to drop in front: a fixed count, or "ethernet" (14 + tags, only when IP follows). */
  readonly strip: number | "ethernet";
  readonly what: string;
}

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const TPIDS = new Set([0x8100, 0x88a8, 0x9100]);

function adaptation(design: DesignDef, linkType: number): Adaptation | undefined {
  if (linkType === design.linkType || design.alsoLinkTypes?.includes(linkType) === true) return { strip: 0, what: "" };
  // Designs whose header starts with an IP header (ipv4, ipv6, gre, vxlan) take IP however it was captured.
  if (design.linkType !== LINKTYPE.RAW) return undefined;
  switch (linkType) {
    case LINKTYPE.RAW_12:
    case LINKTYPE.RAW_14:
    case LINKTYPE.IPV4:
    case LINKTYPE.IPV6:
      return { strip: 0, what: "" };
    case LINKTYPE.NULL:
    case LINKTYPE.LOOP:
      return { strip: 4, what: "BSD loopback header" };
    case LINKTYPE.LINUX_SLL:
      return { strip: 16, what: "Linux cooked header" };
    case LINKTYPE.LINUX_SLL2:
      return { strip: 20, what: "Linux cooked v2 header" };
    case LINKTYPE.ETHERNET:
      return { strip: "ethernet", what: "Ethernet header" };
  }
  return undefined;
}

function accepted(design: DesignDef): string {
  if (design.linkType === LINKTYPE.RAW) return "raw IP, Linux cooked, BSD loopback or Ethernet";
  return [design.linkType, ...(design.alsoLinkTypes ?? [])]
    .map((t) => `${linkTypeName(t)} (link type ${t})`)
    .join(" or ");
}

/** Bytes of Ethernet (and tags) in front of an IP packet at `p`, or 0 if IP does not follow. */
function ethernetPrefix(data: Uint8Array, p: number, len: number): number {
  let at = 12;
  for (let tags = 0; tags <= 2; tags++) {
    if (at + 2 > len) return 0;
    const type = ((data[p + at] ?? 0) << 8) | (data[p + at + 1] ?? 0);
    if (type === ETHERTYPE_IPV4 || type === ETHERTYPE_IPV6) return at + 2;
    if (!TPIDS.has(type)) return 0;
    at += 4;
  }
  return 0;
}

/** One capture file, adapted, as a stream of batches with arrays of its own. */
class FileStream {
  readonly reader: CaptureReader;
  readonly stats: InputStats;
  readonly injection: number;
  readonly #input: InputFile;
  readonly #batches: Generator<PacketBatch, void, undefined>;
  /** An error met inside the current batch: the input ends after the packets before it. */
  #pending: InputError | undefined;
  readonly #adaptations = new Map<number, Adaptation>();
  #lastSec = 0;
  #lastNsec = 0;
  // The current batch, adapted: its packets are data[offset[i] .. + capLen[i]).
  batch: PacketBatch | undefined;
  count = 0;
  cursor = 0;
  offset: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  capLen: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  origLen: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  tsSec: Float64Array<ArrayBufferLike> = new Float64Array(0);
  tsNsec: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

  constructor(input: InputFile) {
    this.#input = input;
    this.injection = input.injection;
    this.reader = openCapture(input.file);
    this.stats = {
      endpoint: input.endpoint,
      file: input.file,
      packets: 0,
      error: undefined,
      linkTypes: new Set(),
      adapted: new Set(),
    };
    this.#batches = this.reader.batches();
  }

  /** The interface's adaptation, or undefined when the network cannot take it (the error is then pending). */
  #accept(iface: InterfaceInfo): Adaptation | undefined {
    try {
      return this.#adaptationFor(iface);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      this.#pending = err;
      return undefined;
    }
  }

  #adaptationFor(iface: InterfaceInfo): Adaptation {
    let a = this.#adaptations.get(iface.index);
    if (a === undefined) {
      const design = this.#input.design;
      a = this.#input.payload ? { strip: 0, what: "" } : adaptation(design, iface.linkType);
      if (a === undefined) {
        throw new InputError(
          this.#input.file,
          this.reader.interfaces.length > 1 ? `interface ${iface.index}` : "",
          `link type ${iface.linkTypeName} (${iface.linkType}) cannot enter ${this.#input.endpoint}: that ` +
            `network's header is ${design.name}`,
          `give it a capture of ${accepted(design)} frames`,
        );
      }
      this.#adaptations.set(iface.index, a);
      this.stats.linkTypes.add(iface.linkTypeName);
      if (a.what !== "") this.stats.adapted.add(a.what);
      if (iface.fcsLen > 0) this.stats.adapted.add(`${iface.fcsLen}-byte FCS`);
    }
    return a;
  }

  /**
   * Passes over up to `n` packets after the current batch without reading
   * them (see CaptureReader.skip), once the capture's one interface is
   * accepted; returns how many (0: read them as batches instead).
   */
  skip(n: number): number {
    const only = this.reader.format === "pcap" ? this.reader.interfaces[0] : undefined;
    if (
      only === undefined ||
      this.reader.skip === undefined ||
      this.#pending !== undefined ||
      this.stats.error !== undefined ||
      !this.#adaptations.has(only.index)
    )
      return 0;
    const k = this.reader.skip(n);
    this.stats.packets += k;
    this.batch = undefined;
    this.count = 0;
    this.cursor = 0;
    return k;
  }

  /**
   * The capture's records to read in blocks elsewhere (src/run/blocks.ts), before any batch:
   * when it is a regular classic pcap file whose frames the network takes as they are. Then
   * blocksRead() says where the blocks stopped, and batches go on from there.
   */
  blocks(): PcapBlocks | undefined {
    const only = this.reader.format === "pcap" ? this.reader.interfaces[0] : undefined;
    if (only === undefined || this.stats.packets > 0 || this.stats.error !== undefined || this.#pending !== undefined)
      return undefined;
    const a = this.#accept(only);
    if (a === undefined || a.strip !== 0 || only.fcsLen !== 0) return undefined;
    return this.reader.blocks?.();
  }

  /** The blocks read `packets` packets, and stopped before the record at file offset `offset`. */
  blocksRead(offset: number, packets: number): void {
    this.stats.packets += packets;
    this.reader.seek?.(offset, this.stats.packets);
  }

  /**
   * Reads and adapts the next batch; false at the end of the input: the end of
   * the file, or bad input (damage, a link type the network cannot take), which
   * is then in `stats.error`. Never throws InputError.
   */
  next(): boolean {
    this.batch = undefined;
    this.count = 0;
    this.cursor = 0;
    if (this.stats.error !== undefined) return false;
    if (this.#pending !== undefined) {
      this.stats.error = this.#pending;
      return false;
    }
    let r: IteratorResult<PacketBatch, void>;
    try {
      r = this.#batches.next();
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      this.stats.error = err;
      return false;
    }
    if (r.done === true) return false;
    this.count = this.#adapt(r.value);
    if (this.count === 0) return this.next();
    this.batch = r.value;
    return true;
  }

  /**
   * Points the arrays at batch `b`'s packets, adapted; returns how many are
   * good. At a packet of a link type the network cannot take it stops, and the
   * error waits in #pending.
   */
  #adapt(b: PacketBatch): number {
    const n = b.count;
    // A pcap file (one interface, every packet timed) that needs nothing taken off: its arrays go as they are.
    const only = this.reader.format === "pcap" ? this.reader.interfaces[0] : undefined;
    if (only !== undefined) {
      const a = this.#accept(only);
      if (a === undefined) return 0;
      if (only.fcsLen === 0 && a.strip === 0) {
        this.offset = b.offset;
        this.capLen = b.capLen;
        this.origLen = b.origLen;
        this.tsSec = b.tsSec;
        this.tsNsec = b.tsNsec;
        return n;
      }
    }
    if (this.offset.length < n || this.offset === b.offset) {
      this.offset = new Uint32Array(n);
      this.capLen = new Uint32Array(n);
      this.origLen = new Uint32Array(n);
      this.tsSec = new Float64Array(n);
      this.tsNsec = new Uint32Array(n);
    }
    for (let i = 0; i < n; i++) {
      const iface = this.reader.interfaces[b.iface[i] ?? 0];
      if (iface === undefined) throw new Error(`packet on undeclared interface ${b.iface[i] ?? 0}`);
      const a = this.#accept(iface);
      if (a === undefined) return i;
      let off = b.offset[i] ?? 0;
      let cap = b.capLen[i] ?? 0;
      let orig = b.origLen[i] ?? 0;
      if (iface.fcsLen > 0) {
        // The FCS is a footer; the model has none. Only a frame captured whole has it at the end.
        if (cap === orig) cap = Math.max(0, cap - iface.fcsLen);
        orig = Math.max(0, orig - iface.fcsLen);
      }
      const strip = a.strip === "ethernet" ? ethernetPrefix(b.data, off, cap) : Math.min(a.strip, cap);
      off += strip;
      cap -= strip;
      orig = Math.max(cap, orig - strip);
      this.offset[i] = off;
      this.capLen[i] = cap;
      this.origLen[i] = orig;
      // A packet without a timestamp (pcapng SPB) keeps time with the packet before it.
      if (((b.flags[i] ?? 0) & PACKET_NO_TIMESTAMP) !== 0) {
        this.tsSec[i] = this.#lastSec;
        this.tsNsec[i] = this.#lastNsec;
      } else {
        this.tsSec[i] = this.#lastSec = b.tsSec[i] ?? 0;
        this.tsNsec[i] = this.#lastNsec = b.tsNsec[i] ?? 0;
      }
    }
    return n;
  }
}

/** The captures `files` injected at `endpoints` (input k at endpoints[k]), in batches of `batchSize`. */
export function openInputs(
  endpoints: readonly ResolvedEndpoint[],
  files: readonly string[],
  batchSize: number,
): Inputs {
  return new Inputs(
    endpoints.map((e, k) => ({
      endpoint: e.text,
      file: files[k] ?? "",
      injection: k,
      design: e.network.spec.design,
      payload: e.kind === "session",
    })),
    batchSize,
  );
}

/** Every input, as one stream of batches in timestamp order. */
export class Inputs {
  readonly #streams: FileStream[];
  readonly #batchSize: number;

  constructor(inputs: readonly InputFile[], batchSize: number) {
    this.#batchSize = batchSize;
    this.#streams = [];
    try {
      for (const input of inputs) this.#streams.push(new FileStream(input));
    } catch (err) {
      this.close();
      throw err;
    }
  }

  get stats(): InputStats[] {
    return this.#streams.map((s) => s.stats);
  }
  /** What ended inputs early, in the order the inputs were given (each after its good packets). */
  get errors(): InputError[] {
    return this.#streams.flatMap((s) => (s.stats.error === undefined ? [] : [s.stats.error]));
  }
  get bytesRead(): number {
    return this.#streams.reduce((n, s) => n + s.reader.bytesRead, 0);
  }
  get totalBytes(): number {
    return this.#streams.reduce((n, s) => n + Math.max(0, s.reader.fileSize), 0);
  }
  /** The inputs that can be read only once, in order (pipes, /dev/stdin, devices: no size, no positions). */
  get readOnce(): string[] {
    return this.#streams.filter((s) => s.reader.fileSize < 0).map((s) => s.stats.file);
  }

  close(): void {
    for (const s of this.#streams) s.reader.close();
  }

  /**
   * Batches to run; each is valid until the next is taken. Every good packet
   * of every input comes out: an input that is damaged (or brings a link type
   * the network cannot take) ends there, and `errors` says so at the end.
   */
  *batches(): Generator<InputBatch, void, undefined> {
    const only = this.#streams.length === 1 ? this.#streams[0] : undefined;
    if (only !== undefined) {
      const injection = only.injection;
      while (only.next()) {
        const b = only.batch;
        if (b === undefined) break;
        only.stats.packets += only.count;
        yield {
          data: b.data,
          count: only.count,
          offset: only.offset,
          capLen: only.capLen,
          origLen: only.origLen,
          tsSec: only.tsSec,
          tsNsec: only.tsNsec,
          endpoint: injection,
        };
      }
      return;
    }
    yield* this.#merged();
  }

  /**
   * Passes over up to `n` packets after the last batch without reading them,
   * as if their batches had come (counted, not run); returns how many, 0 when
   * they must be read (several inputs are merged by reading them). For data
   * planes that run a part of the packets (./workers.ts).
   */
  skip(n: number): number {
    const only = this.#streams.length === 1 ? this.#streams[0] : undefined;
    return only === undefined ? 0 : only.skip(n);
  }

  /**
   * The one input's records to read in blocks (FileStream.blocks), entering at `injection`; `read`
   * says how far they went. Undefined when there are several inputs, or the one must be read as
   * batches.
   */
  blocks(): BlockInput | undefined {
    const only = this.#streams.length === 1 ? this.#streams[0] : undefined;
    const blocks = only?.blocks();
    if (only === undefined || blocks === undefined) return undefined;
    return { blocks, injection: only.injection, read: (offset, packets) => only.blocksRead(offset, packets) };
  }

  /** k-way merge by timestamp (ties: the input given first), copying packets into one buffer. */
  *#merged(): Generator<InputBatch, void, undefined> {
    const live = this.#streams.filter((s) => s.next());
    const n = this.#batchSize;
    let data = new Uint8Array(1 << 20);
    const offset = new Uint32Array(n);
    const capLen = new Uint32Array(n);
    const origLen = new Uint32Array(n);
    const tsSec = new Float64Array(n);
    const tsNsec = new Uint32Array(n);
    const endpoint = new Uint32Array(n);
    let count = 0;
    let used = 0;
    const flush = (): InputBatch => ({ data, count, offset, capLen, origLen, tsSec, tsNsec, endpoint });
    while (live.length > 0) {
      let best = 0;
      for (let k = 1; k < live.length; k++) {
        const a = live[k];
        const b = live[best];
        if (a === undefined || b === undefined) continue;
        const ta = a.tsSec[a.cursor] ?? 0;
        const tb = b.tsSec[b.cursor] ?? 0;
        if (ta < tb || (ta === tb && (a.tsNsec[a.cursor] ?? 0) < (b.tsNsec[b.cursor] ?? 0))) best = k;
      }
      const s = live[best];
      if (s === undefined || s.batch === undefined) break;
      const i = s.cursor;
      const len = s.capLen[i] ?? 0;
      if (count === n || used + len > data.length) {
        if (count > 0) {
          yield flush();
          count = 0;
          used = 0;
        }
        if (len > data.length) data = new Uint8Array(2 * len);
      }
      const from = s.offset[i] ?? 0;
      data.set(s.batch.data.subarray(from, from + len), used);
      offset[count] = used;
      capLen[count] = len;
      origLen[count] = s.origLen[i] ?? 0;
      tsSec[count] = s.tsSec[i] ?? 0;
      tsNsec[count] = s.tsNsec[i] ?? 0;
      endpoint[count] = s.injection;
      s.stats.packets++;
      count++;
      used += len;
      s.cursor++;
      if (s.cursor >= s.count && !s.next()) live.splice(best, 1);
    }
    if (count > 0) yield flush();
  }
}
