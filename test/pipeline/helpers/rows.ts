// The packet-in / packet-out harness: one packet in at an endpoint of a
// description, and every packet out — on which link, or delivered to which
// member — with the drops it met on the way.

import { compile } from "../../../src/control/compile.js";
import { resolveEndpoint } from "../../../src/control/endpoints.js";
import { install } from "../../../src/control/install.js";
import { parseSpec } from "../../../src/description/load.js";
import { DROP_REASONS } from "../../../src/wasm/abi.js";
import { DataPlane } from "../../../src/wasm/module.js";
import { Runner } from "../../../src/wasm/runner.js";

export interface Out {
  /** A link's capture name ("lan.h1.1-sw.1") or "deliver:<network.member>". */
  at: string;
  packet: Uint8Array;
}

export interface Ran {
  out: Out[];
  /** Drops by reason. */
  drops: Record<string, number>;
  /** Drops by member and reason: "ip.b bad-header". */
  dropsAt: Record<string, number>;
}

/** Runs one packet; returns what came out (the injected link's own crossing left out) and the drops. */
export function run(spec: string, endpoint: string, packet: Uint8Array): Ran {
  const compiled = compile(parseSpec(spec, "case.yaml"));
  const ep = resolveEndpoint(compiled, endpoint);
  const dp = DataPlane.load();
  install(dp, compiled, [ep]);
  const runner = new Runner(dp, { maxFanout: compiled.maxFanout });
  const out: Out[] = [];
  runner.run(
    {
      data: packet,
      count: 1,
      offset: Uint32Array.of(0),
      capLen: Uint32Array.of(packet.length),
      origLen: Uint32Array.of(packet.length),
      tsSec: Float64Array.of(1),
      tsNsec: Uint32Array.of(0),
      endpoint: 0,
    },
    0,
    {
      packet(kind, target, data, start, len) {
        const at =
          kind === "link"
            ? (compiled.links[target]?.qualified ?? "?")
            : `deliver:${compiled.members[target]?.qualified ?? "?"}`;
        out.push({ at, packet: data.slice(start, start + len) });
      },
    },
  );
  const drops: Record<string, number> = {};
  const dropsAt: Record<string, number> = {};
  for (let m = -1; m < compiled.members.length; m++) {
    const counts = new BigUint64Array(dp.mem.u8.buffer, dp.exports.memberDrops(m), DROP_REASONS.length);
    counts.forEach((n, r) => {
      if (n === 0n) return;
      const reason = DROP_REASONS[r] ?? "?";
      drops[reason] = (drops[reason] ?? 0) + Number(n);
      const where = `${compiled.members[m]?.qualified ?? "(no member)"} ${reason}`;
      dropsAt[where] = (dropsAt[where] ?? 0) + Number(n);
    });
  }
  // The link the packet was injected on is where it starts, not an output.
  const injected = ep.kind === "link" ? compiled.links[ep.link]?.qualified : undefined;
  return { out: out.filter((o, i) => !(i === 0 && o.at === injected)), drops, dropsAt };
}

/** Outputs as hex, for readable diffs. */
export const hexOuts = (o: readonly Out[]): { at: string; packet: string }[] =>
  o.map((x) => ({ at: x.at, packet: Buffer.from(x.packet).toString("hex") }));
