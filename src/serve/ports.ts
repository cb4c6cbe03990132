// Live ports: an external link of the emulation plugged into a network
// interface with libpcap, through the npm package `cap` (an optional
// dependency: it builds against libpcap's headers, so strata runs without it
// and only --port needs it). Frames arriving on the interface are submitted to
// the emulation, which gathers them into batches; frames the emulation sends
// out of the external link are written to the interface.

import { createRequire } from "node:module";
import type { CompiledSpec } from "../control/compiled.js";
import { excerpt, UsageError } from "../errors.js";
import { type Emulation, type ExternalEnd, resolveExternal } from "./emulation.js";

/** The part of cap's API strata uses (cap has no type definitions). */
export interface CapHandle {
  open(device: string, filter: string, bufSize: number, buffer: Buffer): string;
  send(buffer: Buffer, nBytes?: number): void;
  close(): void;
  on(event: "packet", listener: (nbytes: number, truncated: boolean) => void): void;
  removeAllListeners(event?: string): void;
}

export interface CapModule {
  Cap: { new (): CapHandle; deviceList(): { name: string }[] };
}

/** How to get cap, for the one line --port prints without it. */
export const CAP_INSTALL = "install libpcap's headers and the optional package cap: apt-get install libpcap-dev (Debian) and npm install cap";

/** cap, or undefined when it is not installed or did not build (then its error). */
export function loadCap(): { cap: CapModule } | { cap: undefined; error: string } {
  try {
    const require = createRequire(import.meta.url);
    return { cap: require("cap") as CapModule };
  } catch (err) {
    return { cap: undefined, error: err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err) };
  }
}

/** libpcap's link types as cap names them, and their numbers in a capture file (LINKTYPE_*). */
const CAP_LINK_TYPES: Readonly<Record<string, number>> = { NULL: 0, ETHERNET: 1, RAW: 101, LINKTYPE_LINUX_SLL: 113, IEEE802_11_RADIO: 127 };

/** `--port ENDPOINT=IFACE`, parsed. */
export interface PortArg {
  readonly text: string;
  readonly endpoint: string;
  readonly iface: string;
}

export function parsePort(text: string): PortArg {
  const eq = text.lastIndexOf("=");
  if (eq <= 0 || eq === text.length - 1) throw new UsageError(`--port '${excerpt(text)}' must be ENDPOINT=IFACE, e.g. --port lanA:hostA=veth0`);
  return { text, endpoint: text.slice(0, eq), iface: text.slice(eq + 1) };
}

/** Checks the ports against the description and each other: every one names a different external link and interface. */
export function checkPorts(compiled: CompiledSpec, ports: readonly PortArg[]): void {
  const seen = new Map<string, string>();
  const ifaces = new Map<string, string>();
  for (const p of ports) {
    const ext = resolveExternal(compiled, p.endpoint, `--port ${excerpt(p.text)}`);
    const earlier = seen.get(ext.name);
    if (earlier !== undefined) throw new UsageError(`--port ${excerpt(p.text)}: ${ext.name} is already bound by --port ${excerpt(earlier)} (one interface per external link)`);
    seen.set(ext.name, p.text);
    const other = ifaces.get(p.iface);
    if (other !== undefined) throw new UsageError(`--port ${excerpt(p.text)}: interface ${excerpt(p.iface)} is already bound by --port ${excerpt(other)} (one external link per interface)`);
    ifaces.set(p.iface, p.text);
  }
}

/** Buffer libpcap keeps for packets not yet read (bytes). */
const PCAP_BUFFER = 8 << 20;
/** Largest frame read or sent: libpcap's snapshot length in cap. */
const FRAME_MAX = 65535;

/**
 * An interface opened for one external link, not yet attached to an emulation (packets that
 * arrive before attach() are left in libpcap's buffer... and dropped when they are read).
 */
export class LivePort {
  readonly arg: PortArg;
  readonly #handle: CapHandle;
  readonly #buffer = Buffer.alloc(FRAME_MAX);
  readonly #out = Buffer.alloc(FRAME_MAX);
  /** Frames received and sent, and those that could not be sent (the interface refused them). */
  received = 0;
  sent = 0;
  sendErrors = 0;
  truncated = 0;
  lastSendError = "";
  #closed = false;

  private constructor(arg: PortArg, handle: CapHandle) {
    this.arg = arg;
    this.#handle = handle;
  }

  /**
   * Opens the interface and checks that it carries the frames the external link's network does;
   * UsageError otherwise. What strata sends out of it is never captured back: Linux does not hand
   * a packet socket the frames it sent itself. Frames other programs send out of the interface
   * would be, so give strata interfaces of its own (a veth end, a tap, a NIC without addresses).
   * (pcap's `inbound` filter would exclude them, but libpcap runs a new filter in userland on the
   * first ring block, where `inbound` cannot be evaluated: the first frames to arrive are lost.)
   */
  static open(cap: CapModule, arg: PortArg, linkType: number, networkName: string): LivePort {
    const names = cap.Cap.deviceList().map((d) => d.name);
    if (!names.includes(arg.iface)) {
      throw new UsageError(`--port ${excerpt(arg.text)}: there is no interface '${excerpt(arg.iface)}' (interfaces: ${names.join(", ")})`);
    }
    const handle = new cap.Cap();
    const port = new LivePort(arg, handle);
    let got: string;
    try {
      got = handle.open(arg.iface, "", PCAP_BUFFER, port.#buffer);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new UsageError(`--port ${excerpt(arg.text)}: cannot capture on '${excerpt(arg.iface)}': ${excerpt(why)} (run strata as root, or give node CAP_NET_RAW and CAP_NET_ADMIN)`);
    }
    const number = CAP_LINK_TYPES[got];
    if (number !== linkType) {
      handle.close();
      throw new UsageError(
        `--port ${excerpt(arg.text)}: interface '${excerpt(arg.iface)}' carries ${got} frames and network ${networkName} takes link type ${linkType} (bind an external link of a network whose header the interface carries)`,
      );
    }
    return port;
  }

  /** From now on, frames received go into `em` at `end`, and frames leaving on `end` go out. */
  attach(em: Emulation, end: ExternalEnd): void {
    const endpoint = end.endpoint;
    const buffer = this.#buffer;
    this.#handle.on("packet", (nbytes, truncated) => {
      if (this.#closed || endpoint === undefined) return;
      this.received++;
      // A frame longer than libpcap's snapshot arrives cut (its length on the wire unknown): injected as captured, and counted.
      if (truncated) this.truncated++;
      em.submit(endpoint, buffer, nbytes);
    });
    const exit = end.exit;
    if (exit === undefined) return;
    const out = this.#out;
    em.onExit((x, data, start, len) => {
      if (x.index !== exit.index || this.#closed) return;
      const n = Math.min(len, FRAME_MAX);
      out.set(data.subarray(start, start + n));
      try {
        this.#handle.send(out, n);
        this.sent++;
      } catch (err) {
        // The interface went down or refused the frame: counted, never a crash mid-batch.
        this.sendErrors++;
        this.lastSendError = err instanceof Error ? err.message : String(err);
      }
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#handle.removeAllListeners("packet");
    this.#handle.close();
  }
}
