// Live ports: an external link of the emulation plugged into a network
// interface, by a port process of its own: the native one (AF_PACKET, Linux) or
// one with libpcap, through the npm package `cap` (an optional dependency: it
// builds against libpcap's headers, so strata runs without it); see
// port-backend.ts. Frames arriving on the interface are submitted to
// the emulation's engine (src/engine/engine.ts), which gathers them into
// batches; frames it sends out of the external link are written to the
// interface.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { CompiledSpec } from "../control/compiled.js";
import { excerpt, UsageError } from "../errors.js";
import { linkTypeName } from "../pcap/index.js";
import type { PortSummary } from "../engine/summary.js";
import type { Engine } from "../engine/engine.js";
import { wallClock } from "../engine/options.js";
import { type ExternalEnd, resolveExternal } from "../engine/sinks.js";
import { InterfaceTally, portSummary, readInterface } from "./port-counters.js";
import { FLAG_CUT, RECORD, RecordReader, RecordWriter } from "./port-records.js";
import { interfaceNames, type PortBackend, portCommand } from "./port-backend.js";

export { CAP_INSTALL, type CapHandle, type CapModule, loadCap } from "./port-backend.js";

/** libpcap's link types as cap names them, and their numbers in a capture file (LINKTYPE_*). */
const CAP_LINK_TYPES: Readonly<Record<string, number>> = {
  NULL: 0,
  ETHERNET: 1,
  RAW: 101,
  LINKTYPE_LINUX_SLL: 113,
  IEEE802_11_RADIO: 127,
};

/** Ports one strata serve takes (the port process numbers them in a byte). */
export const MAX_PORTS = 255;

/** `--port ENDPOINT=IFACE`, parsed. */
export interface PortArg {
  readonly text: string;
  readonly endpoint: string;
  readonly iface: string;
}

export function parsePort(text: string): PortArg {
  const eq = text.lastIndexOf("=");
  if (eq <= 0 || eq === text.length - 1)
    throw new UsageError(`--port '${excerpt(text)}' must be ENDPOINT=IFACE, e.g. --port lanA:hostA=veth0`);
  return { text, endpoint: text.slice(0, eq), iface: text.slice(eq + 1) };
}

/** Checks the ports against the description and each other: every one names a different external link and interface. */
export function checkPorts(compiled: CompiledSpec, ports: readonly PortArg[]): void {
  if (ports.length > MAX_PORTS)
    throw new UsageError(
      `${ports.length} --port flags: strata serves at most ${MAX_PORTS} (run another strata serve for more)`,
    );
  const seen = new Map<string, string>();
  const ifaces = new Map<string, string>();
  for (const p of ports) {
    const ext = resolveExternal(compiled, p.endpoint, `--port ${excerpt(p.text)}`);
    const earlier = seen.get(ext.name);
    if (earlier !== undefined)
      throw new UsageError(
        `--port ${excerpt(p.text)}: ${ext.name} is already bound by --port ${excerpt(earlier)} (one interface ` +
          `per external link)`,
      );
    seen.set(ext.name, p.text);
    const other = ifaces.get(p.iface);
    if (other !== undefined)
      throw new UsageError(
        `--port ${excerpt(p.text)}: interface ${excerpt(p.iface)} is already bound by ` +
          `--port ${excerpt(other)} (one external link per interface)`,
      );
    ifaces.set(p.iface, p.text);
  }
}

/** Largest frame sent: libpcap's snapshot length in cap. */
const FRAME_MAX = 65535;

/**
 * A port's capture buffer (libpcap's buffer size), which carries it through the moments its process
 * is not scheduled. cap sets libpcap's immediate mode and a 65535-byte snapshot length, so on an
 * interface with segmentation offloads (a veth, most NICs) libpcap gives every frame, however
 * short, a slot of 64 KB in a 128 KB block of kernel memory: a buffer of 8 MB (what strata had)
 * holds 128 frames, 13 ms at 10,000 frames a second, and takes 16 MB; one of 128 MB holds 2,046
 * frames, 200 ms, and takes 256 MB, held from the moment the port opens (scripts/live-load.sh).
 */
const CAPTURE_BUFFER_MAX = 128 << 20;
const CAPTURE_BUFFER_MIN = 8 << 20;
/** The capture buffers of all ports together, past CAPTURE_BUFFER_MAX each: more ports get smaller ones. */
const CAPTURE_BUFFERS_TOTAL = 512 << 20;

/** The capture buffer of each port of a strata serve with `ports` ports (bytes). */
export function captureBuffer(ports: number): number {
  const share = Math.floor(CAPTURE_BUFFERS_TOTAL / Math.max(1, ports) / (1 << 20)) << 20;
  return Math.min(CAPTURE_BUFFER_MAX, Math.max(CAPTURE_BUFFER_MIN, share));
}
/** How often strata looks whether the interfaces of closed ports are back (ms). */
const REOPEN_MS = 500;
/** Bytes of frames waiting for a port process to take them: past this (the process is stalled), frames for it are not
 * sent. */
const SEND_QUEUE_MAX = 4 << 20;

/** A port: its --port, the external link it binds (NETWORK:EXTERNAL), the link type its network takes, and what went
 * through it. */
export interface LivePort {
  readonly arg: PortArg;
  readonly endpoint: string;
  readonly linkType: number;
  readonly network: string;
  /**
   * Frames the port process passed on; of those, received (taken by strata), received on a link
   * that only leaves the network (not injected), cut to the snapshot length on arrival; frames
   * sent, and not sent (the port closed, its queue was full, or the interface refused them).
   */
  relayed: number;
  received: number;
  ignored: number;
  truncated: number;
  sent: number;
  unsent: number;
  /** Frames the kernel dropped because the port's ring was full, as the native port process counts them. */
  kernelDropped: number;
  lastError: string;
  /** The interface's own counters since strata opened the port. */
  readonly tally: InterfaceTally;
}

/** A port process while it runs; `closed` settles once it has ended and its last records are read. */
interface PortProcess {
  readonly child: ChildProcess;
  readonly closed: Promise<void>;
  /** Its interface is open and carries the port's link type. */
  open: boolean;
  /** Frames for it, gathered during a batch and written after it. */
  readonly out: RecordWriter;
}

/** Whether interface `name` is there and up (Linux: /sys/class/net; elsewhere, libpcap's list). */
function isUp(backend: PortBackend, name: string): boolean {
  const dir = "/sys/class/net";
  if (!existsSync(dir)) return interfaceNames(backend).includes(name);
  try {
    return (Number.parseInt(readFileSync(`${dir}/${name}/flags`, "utf8").trim(), 16) & 1) === 1;
  } catch {
    return false;
  }
}

/**
 * The live ports of a running emulation. Each port's interface is held by a process of its own
 * (native/port-helper.c or port-helper.ts: port-backend.ts), which relays frames over a pipe. The native one ends
 * when its interface goes down or away; cap ends the process it runs in when an
 * interface goes down or away (an assertion in its binding, which nothing in the process can
 * catch), so one process per port is what lets the other ports go on untouched. strata serve keeps
 * running, says so, and opens the port again once its interface is up (frames for a closed port
 * are counted as unsent, frames arriving on it as dropped by the capture).
 *
 * What strata sends out of an interface is never captured back: Linux does not hand a packet
 * socket the frames it sent itself. Frames other programs send out of it would be, so give
 * strata interfaces of its own (a veth end, a tap, a NIC without addresses). (pcap's `inbound`
 * filter would exclude them, but libpcap runs a new filter in userland on the first ring block,
 * where `inbound` cannot be evaluated: the first frames to arrive would be lost.)
 */
export class LivePorts {
  readonly ports: readonly LivePort[];
  readonly #backend: PortBackend;
  readonly #say: (line: string) => void;
  /** Per port: its running process, if any. */
  readonly #procs: (PortProcess | undefined)[];
  readonly #starting: boolean[];
  #closing = false;
  /** The counts once the ports are closed: they change no more. */
  #final: PortSummary[] | undefined;
  #timer: NodeJS.Timeout | undefined;
  #endpoints: (number | undefined)[] = [];
  #em: Engine | undefined;
  #scheduled = false;

  private constructor(backend: PortBackend, ports: LivePort[], say: (line: string) => void) {
    this.#backend = backend;
    this.ports = ports;
    this.#say = say;
    this.#procs = ports.map(() => undefined);
    this.#starting = ports.map(() => false);
  }

  /**
   * Opens every port's interface and checks it carries the frames its network does; UsageError
   * (nothing left open) when an interface does not exist, cannot be opened or carries other frames.
   * `say` gets a line when a port closes because its interface went down, and when it opens again.
   */
  static async open(
    backend: PortBackend,
    specs: readonly { arg: PortArg; endpoint: string; linkType: number; network: string }[],
    say: (line: string) => void,
  ): Promise<LivePorts> {
    const names = interfaceNames(backend);
    for (const { arg } of specs) {
      if (!names.includes(arg.iface))
        throw new UsageError(
          `--port ${excerpt(arg.text)}: there is no interface '${excerpt(arg.iface)}' ` +
            `(interfaces: ${names.join(", ")})`,
        );
    }
    const ports = specs.map((p) => ({
      ...p,
      relayed: 0,
      received: 0,
      ignored: 0,
      truncated: 0,
      sent: 0,
      unsent: 0,
      kernelDropped: 0,
      lastError: "",
      tally: new InterfaceTally(),
    }));
    const live = new LivePorts(backend, ports, say);
    // Counting starts before the capture does: a frame arriving in between is one the capture missed.
    for (const p of ports) p.tally.add(readInterface(p.arg.iface));
    const failed = (await Promise.all(ports.map((_, k) => live.#start(k)))).find((why) => why !== undefined);
    if (failed !== undefined) {
      await live.close();
      throw new UsageError(failed);
    }
    return live;
  }

  /**
   * Starts port k's process; resolves once its interface is open, or with a one-line reason
   * (UsageError text) when it cannot be opened or carries other frames.
   */
  #start(k: number): Promise<string | undefined> {
    const p = this.ports[k];
    if (p === undefined) return Promise.resolve(`--port: no port ${k}`);
    // Its own process group: a Ctrl-C at the terminal is strata serve's to handle, not the port process's.
    const [command, args] = portCommand(this.#backend, captureBuffer(this.ports.length), k, p.arg.iface);
    const child = spawn(command, args, {
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
    const out = new RecordWriter((bytes) => child.stdin?.write(bytes));
    const proc: PortProcess = { child, closed, open: false, out };
    this.#procs[k] = proc;
    let stderr = "";
    // cap writes "Warning: IFACE: no IPv4 address assigned - This may not actually work" for
    // interfaces without an IPv4 address, which is all strata's usually are: kept only to explain a failure.
    child.stderr?.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
    child.stdin?.on("error", () => {}); // the process ended: its exit says why
    return new Promise((resolve) => {
      // A chunk's frames reached strata together: one time for them all.
      let sec = 0;
      let nsec = 0;
      const reader = new RecordReader((kind, _port, flags, body) => {
        if (kind === RECORD.FRAME) {
          this.#frame(k, p, flags, body, sec, nsec);
        } else if (kind === RECORD.SEND_ERROR) {
          p.sent--;
          p.unsent++;
          p.lastError = body.toString();
        } else if (kind === RECORD.DROPPED) {
          p.kernelDropped += body.length >= 4 ? body.readUInt32LE(0) : 0;
        } else if (kind === RECORD.OPENED) {
          const got = (JSON.parse(body.toString()) as string[])[0] ?? "";
          if (CAP_LINK_TYPES[got] !== p.linkType) {
            resolve(
              `--port ${excerpt(p.arg.text)}: interface '${excerpt(p.arg.iface)}' carries ${got} frames and ` +
                `network ${p.network} takes link type ${p.linkType} (bind an external link of a network whose ` +
                `header the interface carries)`,
            );
            this.#stop(child);
            return;
          }
          proc.open = true;
          resolve(undefined);
        } else if (kind === RECORD.FAILED) {
          resolve(
            `--port ${excerpt(p.arg.text)}: cannot capture on ` +
              `'${excerpt(p.arg.iface)}': ${excerpt(body.toString())} (run strata as root, or give node ` +
              `CAP_NET_RAW and CAP_NET_ADMIN)`,
          );
        }
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        [sec, nsec] = wallClock();
        reader.feed(chunk);
      });
      // Once the process has ended and every record it wrote is read.
      void closed.then(() => {
        const why = this.#ended(k, p, proc, stderr);
        if (why !== undefined) resolve(why);
      });
    });
  }

  /** A frame port k's process relayed from its interface: into the emulation on the port's endpoint, or counted. */
  #frame(k: number, p: LivePort, flags: number, body: Buffer, sec: number, nsec: number): void {
    p.relayed++;
    const endpoint = this.#endpoints[k];
    if (this.#em === undefined || this.#closing) return; // dropped by strata: it takes no frames now
    p.received++;
    if (endpoint === undefined) {
      p.ignored++; // the port's external link only leaves the network: nothing enters on it
      return;
    }
    if ((flags & FLAG_CUT) !== 0) p.truncated++;
    this.#em.submit(endpoint, body, body.length, body.length, sec, nsec);
  }

  /**
   * Port k's process `proc` ended and every record it wrote is read: the frames it was never given are unsent, and
   * the port is closed until its interface is up. Returns why it failed to start (from the last line of its stderr)
   * when it ended before opening its interface.
   */
  #ended(k: number, p: LivePort, proc: PortProcess, stderr: string): string | undefined {
    const opened = proc.open;
    proc.open = false;
    if (this.#procs[k] === proc) this.#procs[k] = undefined;
    // Frames it was never given.
    const never = proc.out.drop();
    p.sent -= never;
    p.unsent += never;
    if (!opened) {
      const last = stderr.includes("Assertion") ? "" : (stderr.trim().split("\n").at(-1) ?? "");
      return (
        `--port ${excerpt(p.arg.text)}: the port process ended before it opened the ` +
        `interface${last === "" ? "" : `: ${excerpt(last)}`}`
      );
    }
    if (this.#closing) return undefined;
    p.tally.add(readInterface(p.arg.iface));
    const why = isUp(this.#backend, p.arg.iface) ? "its process ended" : `interface ${p.arg.iface} is down or gone`;
    this.#say(`strata: port ${p.arg.text}: ${why}: the port is closed until its interface is up`);
    this.#watch();
    return undefined;
  }

  #stop(child: ChildProcess): void {
    child.stdin?.end();
    child.kill("SIGTERM");
  }

  /** Until every port is open again: now and then, starts the process of each closed port whose interface is up. */
  #watch(): void {
    if (this.#timer !== undefined || this.#closing) return;
    this.#timer = setInterval(() => this.#tick(), REOPEN_MS);
    this.#timer.unref?.();
  }

  #tick(): void {
    if (this.#closing) return;
    let closed = 0;
    this.ports.forEach((p, k) => {
      if (this.#procs[k]?.open === true) return;
      closed++;
      if (this.#procs[k] !== undefined || this.#starting[k] === true || !isUp(this.#backend, p.arg.iface)) return;
      this.#starting[k] = true;
      void this.#start(k).then((why) => {
        this.#starting[k] = false;
        // Not open (the interface went down again, or carries other frames now): tried again at the next tick.
        if (why === undefined && !this.#closing) this.#say(`port ${p.arg.text} is open again`);
      });
    });
    if (closed === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** From now on, frames received on port k go into `em` at `ends[k]`, and frames leaving on `ends[k]` go out of it. */
  attach(em: Engine, ends: readonly ExternalEnd[]): void {
    this.#em = em;
    this.#endpoints = ends.map((e) => e.endpoint);
    ends.forEach((e, k) => {
      const p = this.ports[k];
      if (p !== undefined && e.endpoint !== undefined) em.stats(e.endpoint)?.linkTypes.add(linkTypeName(p.linkType));
    });
    const byExit = new Map<number, number>();
    ends.forEach((e, k) => {
      if (e.exit !== undefined) byExit.set(e.exit.index, k);
    });
    em.onExit((x, data, start, len) => {
      const k = byExit.get(x.index);
      const p = k === undefined ? undefined : this.ports[k];
      if (k === undefined || p === undefined) return;
      const proc = this.#procs[k];
      const frame = Math.min(len, FRAME_MAX);
      if (proc?.open !== true || proc.out.bytes + (proc.child.stdin?.writableLength ?? 0) + frame > SEND_QUEUE_MAX) {
        p.unsent++;
        return;
      }
      proc.out.put(RECORD.FRAME, k, data.subarray(start, start + frame));
      p.sent++;
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    for (const proc of this.#procs) proc?.out.flush();
  }

  /** Each port's summary: what went through it, and what was dropped on the way in, counted until now (or until the
   * ports closed). */
  counts(): PortSummary[] {
    if (this.#final !== undefined) return this.#final;
    return this.ports.map((p) => {
      p.tally.add(readInterface(p.arg.iface));
      return portSummary({ ...p, port: p.arg.text, iface: p.arg.iface }, p.tally);
    });
  }

  /** Sends what is queued and closes the interfaces; the counts are final from then on. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#flush();
    this.#closing = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    // Each port process sends what it was given, then ends when its stdin does.
    await Promise.all(
      this.#procs.map(async (proc) => {
        if (proc === undefined) return;
        proc.child.stdin?.end();
        const late = setTimeout(() => proc.child.kill("SIGKILL"), 2000);
        await proc.closed;
        clearTimeout(late);
      }),
    );
    this.#final = this.counts();
  }
}
