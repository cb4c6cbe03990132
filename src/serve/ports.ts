// Live ports: an external link of the emulation plugged into a network
// interface with libpcap, through the npm package `cap` (an optional
// dependency: it builds against libpcap's headers, so strata runs without it
// and only --port needs it). Frames arriving on the interface are submitted to
// the emulation, which gathers them into batches; frames the emulation sends
// out of the external link are written to the interface.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { CompiledSpec } from "../control/compiled.js";
import { excerpt, UsageError } from "../errors.js";
import { linkTypeName } from "../pcap/index.js";
import { type Emulation, type ExternalEnd, resolveExternal } from "./emulation.js";
import { FLAG_CUT, RECORD, RecordReader, record } from "./port-records.js";

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
  if (eq <= 0 || eq === text.length - 1) throw new UsageError(`--port '${excerpt(text)}' must be ENDPOINT=IFACE, e.g. --port lanA:hostA=veth0`);
  return { text, endpoint: text.slice(0, eq), iface: text.slice(eq + 1) };
}

/** Checks the ports against the description and each other: every one names a different external link and interface. */
export function checkPorts(compiled: CompiledSpec, ports: readonly PortArg[]): void {
  if (ports.length > MAX_PORTS) throw new UsageError(`${ports.length} --port flags: strata serves at most ${MAX_PORTS} (run another strata serve for more)`);
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

/** Largest frame sent: libpcap's snapshot length in cap. */
const FRAME_MAX = 65535;
/** How often strata looks whether the interfaces of closed ports are back (ms). */
const REOPEN_MS = 500;

/** A port: its --port, the link type its network takes, and what went through it. */
export interface LivePort {
  readonly arg: PortArg;
  readonly linkType: number;
  readonly network: string;
  /**
   * Frames received, sent, cut to the snapshot length on arrival, received on a link that only
   * leaves the network (not injected), and not sent (the port closed, or the interface refused).
   */
  received: number;
  ignored: number;
  sent: number;
  truncated: number;
  unsent: number;
  lastError: string;
}

/** Where the port process's script is: beside this file once built (dist/), or the built copy when run from src/ (tests). */
function helperScript(): string {
  const here = fileURLToPath(new URL("./port-helper.js", import.meta.url));
  if (existsSync(here)) return here;
  return here.replace(`${sep}src${sep}serve${sep}`, `${sep}dist${sep}src${sep}serve${sep}`);
}

/** Whether interface `name` is there and up (Linux: /sys/class/net; elsewhere, libpcap's list). */
function isUp(cap: CapModule, name: string): boolean {
  const dir = "/sys/class/net";
  if (!existsSync(dir)) return cap.Cap.deviceList().some((d) => d.name === name);
  try {
    return (Number.parseInt(readFileSync(`${dir}/${name}/flags`, "utf8").trim(), 16) & 1) === 1;
  } catch {
    return false;
  }
}

/**
 * The live ports of a running emulation. The interfaces are held by a process of their own
 * (port-helper.ts), which relays frames over a pipe: cap ends the process it runs in when an
 * interface goes down or away, and this way strata serve keeps running, says so, and opens the
 * ports again once their interfaces are up (frames for a closed port are counted as unsent).
 *
 * What strata sends out of an interface is never captured back: Linux does not hand a packet
 * socket the frames it sent itself. Frames other programs send out of it would be, so give
 * strata interfaces of its own (a veth end, a tap, a NIC without addresses). (pcap's `inbound`
 * filter would exclude them, but libpcap runs a new filter in userland on the first ring block,
 * where `inbound` cannot be evaluated: the first frames to arrive would be lost.)
 */
export class LivePorts {
  readonly ports: readonly LivePort[];
  readonly #cap: CapModule;
  readonly #say: (line: string) => void;
  #child: ChildProcess | undefined;
  /** The ports the running port process holds. */
  #open = new Set<number>();
  #closing = false;
  #starting = false;
  /** A port process stopped on purpose, to be restarted on more ports. */
  #replacing: ChildProcess | undefined;
  #timer: NodeJS.Timeout | undefined;
  #endpoints: (number | undefined)[] = [];
  #em: Emulation | undefined;
  /** Frames to send, gathered during a batch and written to the port process after it. */
  #pending: Buffer[] = [];
  #scheduled = false;

  private constructor(cap: CapModule, ports: LivePort[], say: (line: string) => void) {
    this.#cap = cap;
    this.ports = ports;
    this.#say = say;
  }

  /**
   * Opens every port's interface and checks it carries the frames its network does; UsageError
   * (nothing left open) when an interface does not exist, cannot be opened or carries other frames.
   * `say` gets a line when ports close because an interface went down, and when they open again.
   */
  static async open(cap: CapModule, specs: readonly { arg: PortArg; linkType: number; network: string }[], say: (line: string) => void): Promise<LivePorts> {
    const names = cap.Cap.deviceList().map((d) => d.name);
    for (const { arg } of specs) {
      if (!names.includes(arg.iface)) throw new UsageError(`--port ${excerpt(arg.text)}: there is no interface '${excerpt(arg.iface)}' (interfaces: ${names.join(", ")})`);
    }
    const ports = specs.map((p) => ({ ...p, received: 0, ignored: 0, sent: 0, truncated: 0, unsent: 0, lastError: "" }));
    const live = new LivePorts(cap, ports, say);
    if (ports.length === 0) return live;
    const got = await live.#start(ports.map((_, k) => k));
    if (typeof got === "string" || got === undefined) {
      const failed = typeof got === "string" ? got : "the port process ended before it opened the interfaces";
      throw new UsageError(failed);
    }
    return live;
  }

  /**
   * Starts the port process on ports `which`; resolves with their link types once open, or a
   * one-line reason (UsageError text) when one cannot be opened or carries other frames.
   */
  #start(which: readonly number[]): Promise<string[] | string | undefined> {
    const args = which.map((k) => `${k}=${this.ports[k]?.arg.iface ?? ""}`);
    // Its own process group: a Ctrl-C at the terminal is strata serve's to handle, not the port process's.
    const child = spawn(process.execPath, [helperScript(), ...args], { stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.#child = child;
    let stderr = "";
    // cap writes "Warning: IFACE: no IPv4 address assigned - This may not actually work" for
    // interfaces without an IPv4 address, which is all strata's usually are: kept only to explain a failure.
    child.stderr?.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
    child.stdin?.on("error", () => {}); // the process ended: its exit says why
    return new Promise((resolve) => {
      let opened = false;
      const reader = new RecordReader((kind, port, flags, body) => {
        const p = this.ports[port];
        if (kind === RECORD.FRAME && p !== undefined) {
          const endpoint = this.#endpoints[port];
          if (this.#em === undefined || this.#closing) return;
          p.received++;
          if (endpoint === undefined) {
            p.ignored++; // the port's external link only leaves the network: nothing enters on it
            return;
          }
          if ((flags & FLAG_CUT) !== 0) p.truncated++;
          this.#em.submit(endpoint, body, body.length);
        } else if (kind === RECORD.SEND_ERROR && p !== undefined) {
          p.sent--;
          p.unsent++;
          p.lastError = body.toString();
        } else if (kind === RECORD.OPENED) {
          const types = JSON.parse(body.toString()) as string[];
          const wrong = which.map((k, i) => ({ p: this.ports[k], got: types[i] ?? "" })).find(({ p, got }) => p !== undefined && CAP_LINK_TYPES[got] !== p.linkType);
          if (wrong?.p !== undefined) {
            const { p: w, got } = wrong;
            resolve(
              `--port ${excerpt(w.arg.text)}: interface '${excerpt(w.arg.iface)}' carries ${got} frames and network ${w.network} takes link type ${w.linkType} (bind an external link of a network whose header the interface carries)`,
            );
            this.#stop(child);
            return;
          }
          opened = true;
          this.#open = new Set(which);
          resolve(types);
        } else if (kind === RECORD.FAILED) {
          const q = this.ports[port];
          resolve(
            q === undefined
              ? `--port: ${body.toString()}`
              : `--port ${excerpt(q.arg.text)}: cannot capture on '${excerpt(q.arg.iface)}': ${excerpt(body.toString())} (run strata as root, or give node CAP_NET_RAW and CAP_NET_ADMIN)`,
          );
        }
      });
      child.stdout?.on("data", (chunk: Buffer) => reader.feed(chunk));
      child.on("exit", () => {
        if (this.#child === child) {
          this.#child = undefined;
          this.#open = new Set();
        }
        if (!opened) {
          resolve(stderr.includes("Assertion") || stderr === "" ? undefined : `--port: the port process ended: ${excerpt(stderr.trim().split("\n").at(-1) ?? "")}`);
          return;
        }
        if (this.#closing) return;
        if (this.#replacing === child) {
          this.#replacing = undefined;
          return;
        }
        const down = which.filter((k) => !isUp(this.#cap, this.ports[k]?.arg.iface ?? "")).map((k) => this.ports[k]?.arg.iface ?? "");
        this.#say(`strata: ${down.length > 0 ? `interface ${down.join(", ")} is down or gone` : "the port process ended"}: the ports are closed until their interfaces are up`);
        this.#watch();
      });
    });
  }

  #stop(child: ChildProcess): void {
    child.stdin?.end();
    child.kill("SIGTERM");
  }

  /** Until every port is open again: now and then, (re)starts the port process on the ports whose interfaces are up. */
  #watch(): void {
    if (this.#timer !== undefined || this.#closing) return;
    this.#timer = setInterval(() => this.#tick(), REOPEN_MS);
    this.#timer.unref?.();
  }

  #tick(): void {
    if (this.#closing || this.#starting) return;
    const up = this.ports.map((p, k) => (isUp(this.#cap, p.arg.iface) ? k : -1)).filter((k) => k >= 0);
    const child = this.#child;
    if (child !== undefined) {
      // Open on some ports, and others are back: restarted on all that are up (its exit says nothing).
      if (up.every((k) => this.#open.has(k))) return;
      this.#replacing = child;
      this.#stop(child);
      return;
    }
    if (up.length === 0) return;
    this.#starting = true;
    void this.#start(up).then((got) => {
      this.#starting = false;
      if (!Array.isArray(got)) return; // tried again at the next tick
      this.#say(`ports open again: ${up.map((k) => this.ports[k]?.arg.text ?? "").join(", ")}`);
      if (up.length === this.ports.length && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    });
  }

  /** From now on, frames received on port k go into `em` at `ends[k]`, and frames leaving on `ends[k]` go out of it. */
  attach(em: Emulation, ends: readonly ExternalEnd[]): void {
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
      if (!this.#open.has(k) || this.#child === undefined) {
        p.unsent++;
        return;
      }
      this.#pending.push(record(RECORD.FRAME, k, data.subarray(start, start + Math.min(len, FRAME_MAX))));
      p.sent++;
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    const out = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#child?.stdin?.write(out);
  }

  /** Sends what is queued and closes the interfaces. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#flush();
    this.#closing = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    // The port process sends what it was given, then ends when its stdin does.
    child.stdin?.end();
    const late = setTimeout(() => child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(late);
  }
}
