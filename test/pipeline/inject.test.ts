// Where an input packet starts: each kind of endpoint puts it at a member, on
// an in-link, on a link and at a step, as the trace's inject event shows.
// topology.ts works these out when the endpoint is set, and again when its
// link is, so loading a packet does not look at the endpoint's kind. And how
// many were injected, which run.ts counts by batch.

import { describe, expect, it } from "vitest";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { install } from "../../src/control/install.js";
import { parseSpec } from "../../src/description/load.js";
import { INJECT_KINDS, LINK_MODES, LINK_NONE, LINK_SELF, STAGES, TRACE_KINDS } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { Runner, type TraceEvent } from "../../src/wasm/runner.js";
import { batchOf } from "./helpers/engine-run.js";

/** a takes packets from the outside on `up` and sends to b; its session 3 pushes an Ethernet header. */
const SPEC = `
networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links:
      - { external: up, to: a.1 }
      - { from: a.2, to: b.1 }
    tables:
      a:
        send: [ { session: 3, header: { dst: "02:00:00:00:00:02", type: 0x88b5 } } ]
`;
const compiled = compile(parseSpec(SPEC, "inject.yaml"));

const member = (key: string): number => compiled.members.find((m) => m.key === key)?.index ?? -2;
const up = compiled.links.find((l) => l.sender < 0);
const aToB = compiled.links.find((l) => l.sender === member("a"));

/** Runs one frame in at `endpoint`, traced, after `change` to the installed data plane; returns its events. */
function eventsOf(endpoint: string, change?: (dp: DataPlane, c: CompiledSpec) => void): TraceEvent[] {
  const dp = DataPlane.load();
  install(dp, compiled, [resolveEndpoint(compiled, endpoint)]);
  change?.(dp, compiled);
  const runner = new Runner(dp, { maxFanout: compiled.maxFanout, trace: true });
  const frame = Uint8Array.from({ length: 60 }, (_, i) => i);
  const events: TraceEvent[] = [];
  runner.run(batchOf([{ bytes: frame, origLen: frame.length, tsSec: 0, tsNsec: 0, endpoint: 0 }]), 0, {
    event: (e) => events.push(e),
  });
  return events;
}

/** The inject event's fields, by name. */
function injection(events: readonly TraceEvent[]): object {
  const e = events[0];
  if (e === undefined || TRACE_KINDS[e.kind] !== "inject") throw new Error("the trace does not begin with inject");
  return { kind: INJECT_KINDS[e.arg], stage: STAGES[e.stage], member: e.member, port: e.ident, link: e.link };
}

describe("an input packet starts where its endpoint puts it", () => {
  it.each([
    {
      name: "onto an external link: no member, no in-link",
      endpoint: "lan:up",
      start: { kind: "link", stage: "link", member: -1, port: LINK_NONE, link: up?.index },
    },
    {
      name: "onto a member's link: as its sender transmits it",
      endpoint: "lan:a.2",
      start: { kind: "link", stage: "link", member: member("a"), port: aToB?.senderOutLink, link: aToB?.index },
    },
    {
      name: "sent by a member: forwarded from self",
      endpoint: "lan:a",
      start: { kind: "self", stage: "forward", member: member("a"), port: LINK_SELF, link: -1 },
    },
    {
      name: "into a session: sent by the member",
      endpoint: "lan:a@3",
      start: { kind: "session", stage: "send", member: member("a"), port: LINK_SELF, link: -1 },
    },
  ])("$name", ({ endpoint, start }) => {
    expect(injection(eventsOf(endpoint))).toEqual(start);
  });

  it("into a session: the session's row takes it", () => {
    const push = eventsOf("lan:a@3").find((e) => TRACE_KINDS[e.kind] === "push");
    expect(push?.ident).toBe(3);
  });

  it("onto a link set again after the endpoint: from the link's new sender", () => {
    const l = aToB;
    if (l === undefined) throw new Error("no link from a");
    const events = eventsOf("lan:a.2", (dp) =>
      dp.exports.linkSet(l.index, l.network, 0, member("b"), 7, LINK_MODES.indexOf(l.mode), l.receivers.length, 0),
    );
    expect(injection(events)).toEqual({ kind: "link", stage: "link", member: member("b"), port: 7, link: l.index });
  });

  it.each([
    { name: "one batch", batches: [3], reset: -1, injected: 3 },
    { name: "batches add up", batches: [3, 2, 4], reset: -1, injected: 9 },
    { name: "a reset after a batch: the batches after it", batches: [3, 2, 4], reset: 0, injected: 6 },
    { name: "a reset after the last batch", batches: [3, 2], reset: 1, injected: 0 },
  ])("counts the packets injected since the counters were reset: $name", ({ batches, reset, injected }) => {
    const dp = DataPlane.load();
    install(dp, compiled, [resolveEndpoint(compiled, "lan:up")]);
    const runner = new Runner(dp, { maxFanout: compiled.maxFanout });
    const frame = { bytes: new Uint8Array(60), origLen: 60, tsSec: 0, tsNsec: 0, endpoint: 0 };
    let first = 0;
    batches.forEach((n, k) => {
      runner.run(batchOf(Array.from({ length: n }, () => frame)), first, null);
      first += n;
      if (k === reset) dp.exports.countersReset();
    });
    expect(dp.exports.packetsInjected()).toBe(injected);
  });
});
