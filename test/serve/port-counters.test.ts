// What a live port lost on the way in (src/serve/port-counters.ts), without
// interfaces: an interface's counters summed across samples, the drops derived
// from them and from what the port process passed on, the line a person reads,
// and the summary's `ports` section as the command counts and summary.json show it.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PortSummary } from "../../src/engine/summary.js";
import { runCommand } from "../../src/serve/control.js";
import { openServed } from "../engine/served.js";
import {
  type InterfaceSample,
  InterfaceTally,
  portLine,
  portSummary,
  type PortTraffic,
  readInterface,
} from "../../src/serve/port-counters.js";

const root = new URL("../..", import.meta.url).pathname;
const spec = join(root, "examples/live-router/network.yaml");

const at = (rxPackets: number, rxDropped = 0, txPackets = 0, ifindex = 7): InterfaceSample => ({
  ifindex,
  rxPackets,
  rxDropped,
  txPackets,
});

describe("InterfaceTally", () => {
  it.each([
    { name: "no sample: unknown", samples: [], want: { known: false, rx: 0, dropped: 0, tx: 0 } },
    {
      name: "one sample: where counting starts",
      samples: [at(500, 3, 9)],
      want: { known: true, rx: 0, dropped: 0, tx: 0 },
    },
    {
      name: "growth since the first sample",
      samples: [at(500, 3, 9), at(800, 4, 10), at(1000, 4, 12)],
      want: { known: true, rx: 500, dropped: 1, tx: 3 },
    },
    {
      name: "an interface gone at a sample is skipped",
      samples: [at(100), undefined, at(150)],
      want: { known: true, rx: 50, dropped: 0, tx: 0 },
    },
    { name: "never there", samples: [undefined, undefined], want: { known: false, rx: 0, dropped: 0, tx: 0 } },
    {
      name: "created again (new index): its counters count from 0",
      samples: [at(100, 1, 1), at(140, 1, 1), at(30, 2, 5, 8)],
      want: { known: true, rx: 70, dropped: 2, tx: 5 },
    },
    {
      name: "a counter that went back: counted from 0",
      samples: [at(100), at(20)],
      want: { known: true, rx: 20, dropped: 0, tx: 0 },
    },
  ])("$name", ({ samples, want }) => {
    const t = new InterfaceTally();
    for (const s of samples) t.add(s);
    expect({ known: t.known, rx: t.rxPackets, dropped: t.rxDropped, tx: t.txPackets }).toEqual(want);
  });

  it("reads an interface's counters where the system has them", () => {
    expect(readInterface("strata-no-such-interface")).toBeUndefined();
    if (process.platform === "linux")
      expect(readInterface("lo")).toMatchObject({ ifindex: expect.any(Number), rxPackets: expect.any(Number) });
  });
});

describe("portSummary: every frame the interface took is received or counted dropped", () => {
  const traffic = (t: Partial<PortTraffic>): PortTraffic => ({
    port: "lanA:hostA=eA",
    endpoint: "lanA:hostA",
    iface: "eA",
    relayed: 0,
    received: 0,
    ignored: 0,
    truncated: 0,
    sent: 0,
    unsent: 0,
    ...t,
  });
  const tally = (rx: number, dropped: number, tx: number): InterfaceTally => {
    const t = new InterfaceTally();
    t.add(at(0));
    t.add(at(rx, dropped, tx));
    return t;
  };
  it.each([
    { name: "nothing lost", traffic: { relayed: 100, received: 100 }, tally: tally(100, 0, 0), want: [0, 0, 0] },
    {
      name: "the capture buffer overflowed",
      traffic: { relayed: 128, received: 128 },
      tally: tally(1000, 0, 0),
      want: [0, 872, 0],
    },
    {
      name: "the interface dropped some first",
      traffic: { relayed: 90, received: 90 },
      tally: tally(90, 10, 0),
      want: [10, 0, 0],
    },
    {
      name: "strata took none while stopping",
      traffic: { relayed: 100, received: 95 },
      tally: tally(100, 0, 0),
      want: [0, 0, 5],
    },
    {
      name: "its own sends are not seen by the capture",
      traffic: { relayed: 50, received: 50, sent: 40 },
      tally: tally(50, 0, 40),
      want: [0, 0, 0],
    },
    {
      name: "another program's sends are seen by the capture",
      traffic: { relayed: 53, received: 53, sent: 40 },
      tally: tally(50, 0, 43),
      want: [0, 0, 0],
    },
    {
      name: "… and do not hide a capture drop",
      traffic: { relayed: 50, received: 50, sent: 40 },
      tally: tally(50, 0, 43),
      want: [0, 3, 0],
    },
    {
      name: "sends the interface did not count do not make drops",
      traffic: { relayed: 50, received: 50, sent: 40 },
      tally: tally(60, 0, 30),
      want: [0, 10, 0],
    },
  ])("$name", ({ traffic: t, tally: n, want }) => {
    const s = portSummary(traffic(t), n);
    expect([s.droppedByInterface, s.droppedByCapture, s.droppedByStrata]).toEqual(want);
    expect(s.received + (s.droppedByCapture ?? 0) + s.droppedByStrata).toBe(
      n.rxPackets + Math.max(0, n.txPackets - (t.sent ?? 0)),
    );
  });

  it.each([
    { name: "within what the interface's counters show", kernelDropped: 30, tally: tally(130, 0, 0), want: 30 },
    {
      name: "beyond them (an interface that does not count them all)",
      kernelDropped: 7,
      tally: tally(100, 0, 0),
      want: 7,
    },
    { name: "none", kernelDropped: 0, tally: tally(104, 0, 0), want: 4 },
  ])("the native port process's count of the ring's drops: $name", ({ kernelDropped, tally: n, want }) => {
    expect(portSummary(traffic({ relayed: 100, received: 100, kernelDropped }), n).droppedByCapture).toBe(want);
  });

  it("without the interface's counters, the kernel's drops are unknown", () => {
    expect(portSummary(traffic({ relayed: 3, received: 2 }), new InterfaceTally())).toMatchObject({
      droppedByInterface: null,
      droppedByCapture: null,
      droppedByStrata: 1,
    });
  });
});

const port = (p: Partial<PortSummary>): PortSummary => ({
  port: "lanA:hostA=eA",
  endpoint: "lanA:hostA",
  interface: "eA",
  received: 0,
  sent: 0,
  truncated: 0,
  ignored: 0,
  unsent: 0,
  droppedByInterface: 0,
  droppedByCapture: 0,
  droppedByStrata: 0,
  ...p,
});

describe("portLine", () => {
  it.each([
    {
      name: "nothing lost",
      p: port({ received: 1234, sent: 5 }),
      line:
        "port lanA:hostA=eA: 1,234 received, 5 sent; dropped on the way in: 0 " +
        "by the interface, 0 by the capture, 0 by strata",
    },
    {
      name: "lost everywhere",
      p: port({ received: 128, droppedByInterface: 2, droppedByCapture: 123_872, droppedByStrata: 1 }),
      line:
        "port lanA:hostA=eA: 128 received, 0 sent; dropped on the way in: 2 by " +
        "the interface, 123,872 by the capture, 1 by strata",
    },
    {
      name: "cut, ignored and unsent frames",
      p: port({ received: 9, truncated: 1, ignored: 2, unsent: 3 }),
      line:
        "port lanA:hostA=eA: 9 received, 0 sent, 1 cut to the snapshot length, " +
        "2 ignored (its link only leaves the network), 3 not sent (the port was " +
        "closed or stalled, or the interface refused them); dropped on the way " +
        "in: 0 by the interface, 0 by the capture, 0 by strata",
    },
    {
      name: "no interface counters",
      p: port({ droppedByInterface: null, droppedByCapture: null }),
      line:
        "port lanA:hostA=eA: 0 received, 0 sent; dropped on the way in: unknown " +
        "by the interface, unknown by the capture, 0 by strata",
    },
  ])("$name", ({ p, line }) => {
    expect(portLine(p)).toBe(line);
  });
});

describe("the summary's ports", () => {
  const ports = [
    port({ received: 4, droppedByCapture: 6 }),
    port({ port: "lanB:hostB=eB", endpoint: "lanB:hostB", interface: "eB" }),
  ];

  it("are in summary(), the command counts and summary.json once an emulation reports them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-ports-"));
    try {
      const { em, stop } = openServed({ spec, endpoints: ["lanA:hostA"], out: join(dir, "out") });
      expect(em.summary().ports).toBeUndefined();
      em.reportPorts(() => ports);
      expect(em.summary().ports).toEqual(ports);
      const r = await runCommand(em, "counts");
      expect(r.line.split("\n")).toEqual([
        "injected 0, copies 0, delivered 0, dropped 0, left 0, row hits 0 on 0 rows",
        ...ports.map(portLine),
      ]);
      stop();
      expect(
        (JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8")) as { ports: PortSummary[] }).ports,
      ).toEqual(ports);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("are not in a summary nobody reports ports for (strata run's)", () => {
    expect(Object.keys(openServed({ spec, endpoints: [] }).stop())).not.toContain("ports");
  });
});
