// The analysis counts links as the data plane counts them against its hop
// limit (`strata run --hop-limit`): every crossing, a virtual link's and the
// underlay crossings that carry it included. IPv4 stacked K deep in IPv4: a
// packet ipK's a sends to b crosses K links, so past the hop limit the data
// plane drops it as a loop, and the analysis must say b is not reached, and
// why. Both are asked, at several depths and limits.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { computeRelations, report } from "../../src/analysis/properties.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { parseSpec } from "../../src/description/load.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { ipv4Packet } from "../pipeline/helpers/packets.js";
import { emulate, rowName } from "./helpers/observe.js";
import { ipInIp } from "./helpers/generate.js";

const LAYERS = 70;
const compiled = compile(parseSpec(ipInIp(LAYERS), "ip-in-ip.yaml"));

const member = (c: CompiledSpec, name: string): number => c.members.find((m) => m.qualified === name)?.index ?? -1;

/** Whether a packet ipK's a sends gets to b (its acquire row takes it), by the data plane at this hop limit. */
function acquired(k: number, hopLimit: number): { acquired: boolean; loop: boolean } {
  const dst = (10n << 24n) | (BigInt(k >> 8) << 16n) | (BigInt(k & 255) << 8n) | 2n;
  const bytes = ipv4Packet({ src: dst - 1n, dst, proto: 17 });
  const seen = emulate(
    compiled,
    [{ kind: "self", member: member(compiled, `ip${k}.a`), session: 0, link: -1 }],
    [{ bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0, endpoint: 0 }],
    hopLimit,
  );
  const o = seen?.[0];
  if (o === undefined || "skip" in o) throw new Error(`packet not observed: ${JSON.stringify(o)}`);
  return { acquired: o.rows.has(rowName(compiled, `ip${k}.b`, "acquire", 0)), loop: o.loop };
}

/** Depths and hop limits: a stack K deep crosses K links from ipK's a to b. */
const CASES: readonly { k: number; hopLimit: number; reaches: boolean }[] = [
  { k: 64, hopLimit: 64, reaches: true },
  { k: 65, hopLimit: 64, reaches: false },
  { k: 70, hopLimit: 64, reaches: false },
  { k: 10, hopLimit: 10, reaches: true },
  { k: 11, hopLimit: 10, reaches: false },
  { k: 70, hopLimit: 1024, reaches: true },
];

describe("hop counts across layers: the analysis as the data plane", () => {
  const analyses = new Map<number, ReturnType<typeof computeRelations> & { a: Analysis }>();
  const analysed = (hopLimit: number): ReturnType<typeof computeRelations> & { a: Analysis } => {
    let x = analyses.get(hopLimit);
    if (x === undefined) {
      const a = new Analysis(compiled, { hopLimit });
      x = { a, ...computeRelations(a) };
      analyses.set(hopLimit, x);
    }
    return x;
  };

  test.each(CASES)("ip$k, hop limit $hopLimit: reaches $reaches", ({ k, hopLimit, reaches }) => {
    const { a, relation } = analysed(hopLimit);
    const c = a.components.find((x) => x.kind === "network" && x.name === `ip${k}`);
    const rel = c === undefined ? undefined : relation.get(c);
    expect(rel?.reaches(member(compiled, `ip${k}.a`), member(compiled, `ip${k}.b`))).toBe(reaches);
    expect(acquired(k, hopLimit)).toEqual({ acquired: reaches, loop: !reaches });
  });

  test("the report says why: the hop limit, and the links the layers below cross", () => {
    const rep = report(analysed(64).a);
    const ip70 = rep.components.find((c) => c.name === "ip70")?.properties.find((p) => p.name === "Fully_reachable");
    expect(ip70?.holds).toBe(false);
    expect(ip70?.counterexamples[0]).toBe(
      "ip70.a reaches no other member (the hop limit (64 links) drops it as a loop: with ip70.a forward row 0 → " +
        "ip70.a transmit row 0 → ip70.a.1-b.1 it would cross more than 64 links, every layer's counted)",
    );
    const ip64 = rep.components.find((c) => c.name === "ip64")?.properties.find((p) => p.name === "Fully_reachable");
    expect(ip64?.holds).toBe(true);
    expect(rep.layering.counterexamples[0]).toBe(
      "ip65.a.1-b.1 (ip65.a → ip65.b) via ip64 session 1: expected ip64.b receive → link ip65.1; instead dropped at " +
        "ip64.a: the hop limit (64 links) drops it as a loop: with ip64.a forward row 0 → ip64.a transmit row 0 → " +
        "ip64.a.1-b.1 it would cross 65 links, every layer's counted",
    );
  });

  const dir = mkdtempSync(join(tmpdir(), "strata-hops-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("strata analyze: --hop-limit is the data plane's, for the whole report", async () => {
    const file = join(dir, "ip-in-ip.yaml");
    writeFileSync(file, ipInIp(LAYERS));
    const run = async (...argv: string[]): Promise<{ code: number; last: string }> => {
      const io = memoryIo();
      const code = await main(["analyze", file, ...argv], io);
      return { code, last: io.stdout.text.trimEnd().split("\n").at(-1) ?? "" };
    };
    // ip65…ip70: Fully_reachable, and ip65…ip69 (with sessions) the communication demand; the layering demand. With
    // no delivery in ip65…ip69, no inclusion of effectivelyReachable is checked there.
    expect(await run()).toEqual({ code: 1, last: "12 of 485 properties fail" });
    expect(await run("--hop-limit", "1024")).toEqual({ code: 0, last: "every property holds (490)" });
  });
});
