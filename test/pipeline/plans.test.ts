// A member's plan (assembly/pipeline/plan.ts) settles what its tables make of
// every packet for one batch. Tables change between batches: each case runs a
// packet, changes what a plan is made of on the same data plane, and runs the
// packet again; the second run must match a fresh install of the changed
// description, and differ from the first (the change matters).

import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { type Installed, install } from "../../src/control/install.js";
import { Reconciler, type Target } from "../../src/control/reconcile.js";
import { parseSpec } from "../../src/description/load.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { Runner } from "../../src/wasm/runner.js";
import { ethernetFrame } from "./helpers/packets.js";
import { recordIn } from "./helpers/recorded.js";

const SW = 0x02000000000an;
const H = 0x02000000000bn;

/**
 * A switch sw that forwards every frame (keyless acquire) to host h, which delivers every frame it receives.
 * With `transmit`, sw's transmit rows as written, and beside it on its machine sw of network core,
 * which sends session 1 out of an external link.
 */
function spec(o: { sw?: string; h?: string; transmit?: string } = {}): string {
  return `networks:
  lan:
    header: ethernet
    members:
      sw: { name: "02:00:00:00:00:0a" }
      h: { name: "02:00:00:00:00:0b" }
    links:
      - { external: feed, to: sw.1 }
      - { from: sw.2, to: h.1 }
    tables:
      sw:
${
  o.sw ??
  `        acquire: [ { do: forward } ]
        forward: [ { out: 2 } ]
        receive: [ { do: deliver } ]`
}
${o.transmit === undefined ? "" : `        transmit: [ ${o.transmit} ]\n`}      h:
${
  o.h ??
  `        acquire: [ { match: { dst: "02:00:00:00:00:0b" }, do: receive } ]
        receive: [ { do: deliver } ]`
}
${
  o.transmit === undefined
    ? ""
    : `  core:
    header: ethernet
    members:
      sw: { name: "02:00:00:00:01:0a" }
    links:
      - { from: sw.1, external: up }
    tables:
      sw:
        send: [ { session: 1, header: { dst: "02:00:00:00:01:0b", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
`
}`;
}

const compiled = (text: string): CompiledSpec => compile(parseSpec(text, "plans.yaml"));

/** Where the probe frame was recorded (links crossed, delivered to) and what was dropped, by name, sorted. */
function fates(dp: DataPlane, installed: Installed): string[] {
  const c = installed.compiled;
  dp.exports.countersReset();
  const out: string[] = [];
  const recorded = recordIn(dp, c);
  const runner = new Runner(dp, { maxFanout: c.maxFanout, slotLen: 512 }, recorded);
  const frame = ethernetFrame({ dst: H, src: SW, payload: new Uint8Array(46) });
  runner.run(
    {
      data: frame,
      count: 1,
      offset: Uint32Array.of(0),
      capLen: Uint32Array.of(frame.length),
      origLen: Uint32Array.of(frame.length),
      tsSec: Float64Array.of(1),
      tsNsec: Uint32Array.of(0),
      endpoint: 0,
    },
    0,
    null,
  );
  runner.flushRecordings();
  for (const [file, records] of recorded.files) {
    const what = file.startsWith("links/")
      ? `link ${file.slice("links/".length)}`
      : `deliver ${file.slice("delivered/".length)}`;
    for (const _ of records) out.push(what);
  }
  for (const m of c.members) {
    const counts = new BigUint64Array(dp.mem.u8.buffer, dp.exports.memberDrops(m.index), DROP_REASONS.length);
    DROP_REASONS.forEach((r, k) => {
      if ((counts[k] ?? 0n) > 0n) out.push(`drop ${m.qualified} ${r}`);
    });
  }
  return out.sort();
}

function fresh(text: string): string[] {
  const c = compiled(text);
  const dp = DataPlane.load();
  return fates(dp, install(dp, c, [resolveEndpoint(c, "lan:feed")]));
}

type Change = { readonly text: string } | { readonly down: Target };

describe("plans last one batch", () => {
  it.each<{ name: string; base?: string; change: Change; after: string[] }>([
    {
      name: "the switch's keyless acquire row turns from forward to receive",
      change: {
        text: spec({
          sw:
            "        acquire: [ { do: receive } ]\n        forward: [ { out: 2 } " +
            "]\n        receive: [ { do: deliver } ]",
        }),
      },
      after: ["link lan.feed", "deliver lan.sw"],
    },
    {
      name: "the switch's acquire row gets a key",
      change: {
        text: spec({
          sw:
            '        acquire: [ { match: { dst: "02:00:00:00:00:0c" }, do: forward ' +
            "} ]\n        forward: [ { out: 2 } ]",
        }),
      },
      after: ["link lan.feed", "drop lan.sw acquire-miss"],
    },
    {
      name: "the host's keyless receive row turns from deliver to none",
      change: { text: spec({ h: '        acquire: [ { match: { dst: "02:00:00:00:00:0b" }, do: receive } ]' }) },
      after: ["link lan.feed", "link lan.sw.2-h.1", "drop lan.h receive-miss"],
    },
    {
      name: "the switch goes down",
      change: { down: { member: "lan:sw" } },
      after: ["link lan.feed", "drop lan.sw member-down"],
    },
    {
      name: "the host goes down",
      change: { down: { member: "lan:h" } },
      after: ["link lan.feed", "link lan.sw.2-h.1", "drop lan.h member-down"],
    },
    {
      // The same transmit table, its row modified in place: what the plan knew of its rows is out of date.
      name: "the switch's physical transmit row turns into a session of core",
      base: spec({ transmit: "{ out: 2 }" }),
      change: { text: spec({ transmit: "{ out: 2, via: { session: core.1 } }" }) },
      after: ["link lan.feed", "link lan.sw.2-h.1", "link core.up"],
    },
  ])("$name", ({ base, change, after }) => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compiled(base ?? spec()), ["lan:feed"]);
    const before = fates(dp, rec.current());
    expect(before).toEqual(["link lan.feed", "link lan.sw.2-h.1", "deliver lan.h"].sort());
    if ("text" in change) rec.apply(compiled(change.text));
    else rec.setDown(change.down, true);
    const now = fates(dp, rec.current());
    expect(now).toEqual([...after].sort());
    if ("text" in change) expect(now).toEqual(fresh(change.text));
  });
});
