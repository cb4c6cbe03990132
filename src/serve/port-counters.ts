// What a live port lost on the way in, and where. A frame arriving on a port's
// interface can be dropped by the interface itself (its driver, or the kernel's
// backlog in front of every capture), by the capture (the kernel buffer between
// the interface and the port process was full, or no port process was reading:
// the port was closed or reopening), or by strata (the port process passed it
// on while the emulation was not taking frames). libpcap counts the first two
// in pcap_stats (ps_ifdrop, ps_drop), but cap does not expose it; so strata reads
// the interface's own counters, as libpcap's ps_ifdrop does, and counts as
// dropped by the capture what the interface received and the port process never
// passed on. Every frame the interface took is then received or counted dropped.

import { readFileSync } from "node:fs";
import type { PortSummary } from "../engine/summary.js";

/** An interface's kernel counters at one moment. */
export interface InterfaceSample {
  /** A new index: the interface was removed and created again, and its counters started at 0. */
  readonly ifindex: number;
  readonly rxPackets: number;
  readonly rxDropped: number;
  readonly txPackets: number;
}

/** The counters of interface `name` now (Linux: /sys/class/net), or undefined where there are none (another system, or
 * the interface is gone). */
export function readInterface(name: string): InterfaceSample | undefined {
  const dir = `/sys/class/net/${name}`;
  try {
    const read = (file: string): number => Number.parseInt(readFileSync(`${dir}/${file}`, "utf8"), 10);
    const s = {
      ifindex: read("ifindex"),
      rxPackets: read("statistics/rx_packets"),
      rxDropped: read("statistics/rx_dropped"),
      txPackets: read("statistics/tx_packets"),
    };
    return Object.values(s).every(Number.isSafeInteger) ? s : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An interface's counters summed from the first sample on, across the interface being removed
 * and created again (then its new counters count from 0). Samples are taken when a port opens or
 * closes and whenever its counts are asked for; an interface gone at a sample is skipped.
 */
export class InterfaceTally {
  rxPackets = 0;
  rxDropped = 0;
  txPackets = 0;
  #last: InterfaceSample | undefined;

  /** Whether a sample was ever read (without one, the interface's counters are unknown). */
  get known(): boolean {
    return this.#last !== undefined;
  }

  add(s: InterfaceSample | undefined): void {
    if (s === undefined) return;
    const last = this.#last;
    this.#last = s;
    if (last === undefined) return; // the first sample is where counting starts
    const since = (now: number, before: number): number =>
      s.ifindex !== last.ifindex || now < before ? now : now - before;
    this.rxPackets += since(s.rxPackets, last.rxPackets);
    this.rxDropped += since(s.rxDropped, last.rxDropped);
    this.txPackets += since(s.txPackets, last.txPackets);
  }
}

/** What went through a port, as strata serve counts it. */
export interface PortTraffic {
  readonly port: string;
  readonly endpoint: string;
  readonly iface: string;
  /** Frames the port process passed to strata. */
  readonly relayed: number;
  /** Of those, frames strata took (into the emulation, or ignored). */
  readonly received: number;
  readonly ignored: number;
  readonly truncated: number;
  /** Frames the port process sent out of the interface (as far as strata knows). */
  readonly sent: number;
  readonly unsent: number;
  /** Frames the kernel said it dropped for the capture (the native port process reads it; cap does not). */
  readonly kernelDropped?: number;
}

/**
 * A port's line of the summary. A capture sees the frames the interface received and those other
 * programs sent out of it (never the port process's own): what it saw and did not pass on is
 * dropped by the capture.
 */
export function portSummary(t: PortTraffic, tally: InterfaceTally): PortSummary {
  const others = Math.max(0, tally.txPackets - t.sent);
  return {
    port: t.port,
    endpoint: t.endpoint,
    interface: t.iface,
    received: t.received,
    sent: t.sent,
    truncated: t.truncated,
    ignored: t.ignored,
    unsent: t.unsent,
    droppedByInterface: tally.known ? tally.rxDropped : null,
    // The kernel's own count is part of what the interface's counters show; the larger of the two, should they differ.
    droppedByCapture: tally.known ? Math.max(0, tally.rxPackets + others - t.relayed, t.kernelDropped ?? 0) : null,
    droppedByStrata: t.relayed - t.received,
  };
}

const count = (n: number): string => n.toLocaleString("en-US");

/** A port's counts on one line (the report at the end, the command counts): what went through it, and what was dropped
 * before it reached the emulation, by where. */
export function portLine(p: PortSummary): string {
  const cut = p.truncated > 0 ? `, ${count(p.truncated)} cut to the snapshot length` : "";
  const ignored = p.ignored > 0 ? `, ${count(p.ignored)} ignored (its link only leaves the network)` : "";
  const unsent =
    p.unsent > 0 ? `, ${count(p.unsent)} not sent (the port was closed or stalled, or the interface refused them)` : "";
  const known = (n: number | null): string => (n === null ? "unknown" : count(n));
  const dropped =
    `dropped on the way in: ${known(p.droppedByInterface)} by the ` +
    `interface, ${known(p.droppedByCapture)} by the capture, ${count(p.droppedByStrata)} by strata`;
  return `port ${p.port}: ${count(p.received)} received, ${count(p.sent)} sent${cut}${ignored}${unsent}; ${dropped}`;
}
