// The l2 intent compiled to rows: on a ring of switches (a loop in the topology)
// with a host at each, every host reaches every host with no loop (the analysis),
// a broadcast from any host reaches each other host exactly once (the emulation),
// and still does after a ring link goes down (recomputed, as routes are); hand
// rows beside the intent's win; bad l2 intents are one line each.

import { describe, expect, test } from "vitest";
import { errorsOf, load } from "./helpers/load.js";
import { Analysis } from "../../src/analysis/analysis.js";
import { report } from "../../src/analysis/properties.js";
import { compile } from "../../src/control/compile.js";
import type { Spec } from "../../src/description/types.js";
import { Engine } from "../../src/engine/engine.js";
import { batchOf } from "../pipeline/helpers/engine-run.js";
import { ethernetFrame } from "../pipeline/helpers/packets.js";

type Doc = Record<string, unknown>;

const BROADCAST = 0xffffffffffffn;
const mac = (n: number): bigint => 0x020000000000n + BigInt(n);
const macText = (n: number): string => `02:00:00:00:00:${n.toString(16).padStart(2, "0")}`;

/** A ring of `n` switches s1.. (s_i.1 to s_i+1.2, link r_i), host h_i on s_i.3, and what else the network says. */
function ring(n: number, more: Doc = {}, header = "ethernet"): string {
  const members: Record<string, Doc> = {};
  const links: Doc[] = [];
  for (let i = 1; i <= n; i++) {
    members[`s${i}`] = { name: macText(0xf0 + i), role: "infra" };
    members[`h${i}`] = { name: macText(i) };
    links.push({ from: `s${i}.1`, to: `s${(i % n) + 1}.2`, mode: "two-way", name: `r${i}` });
    links.push({ from: `h${i}.1`, to: `s${i}.3`, mode: "two-way" });
  }
  return JSON.stringify({ networks: { lan: { header, members, links, l2: {}, ...more } } });
}

/** Each compiled row of a member's table as "text  provenance". */
function rowsOf(text: string, member: string, role: "acquire" | "forward" | "receive"): string[] {
  const spec = load(text);
  const rows = spec.networks[0]?.tables.get(member)?.[role]?.rows ?? [];
  const c = compile(spec);
  const texts = c.members.find((m) => m.key === member)?.tables[role]?.rows.map((r) => r.text) ?? [];
  return texts.map(
    (t, i) => `${t} | ${rows[i]?.intent === undefined ? "hand" : `l2: ${rows[i]?.intent?.destination}`}`,
  );
}

describe("l2 rows", () => {
  const CASES: { name: string; member: string; role: "acquire" | "forward" | "receive"; want: string[] }[] = [
    {
      name: "the root switch: a shortest path to each host, then floods out of its tree links but the one in",
      member: "s1",
      role: "forward",
      want: [
        "dst 02:00:00:00:00:01 → out 3 | l2: h1",
        "dst 02:00:00:00:00:02 → out 1 | l2: h2",
        "dst 02:00:00:00:00:03 → out 1 | l2: h3",
        "dst 02:00:00:00:00:04 → out 2 | l2: h4",
        "in 1, dst ff:ff:ff:ff:ff:ff → out 2, 3 | l2: flood",
        "in 2, dst ff:ff:ff:ff:ff:ff → out 1, 3 | l2: flood",
        "in 3, dst ff:ff:ff:ff:ff:ff → out 1, 2 | l2: flood",
      ],
    },
    {
      name: "the ring's far link (s3-s4) is out of the tree: s3 floods only between s2 and h3 (h1: a tie, out 1)",
      member: "s3",
      role: "forward",
      want: [
        "dst 02:00:00:00:00:01 → out 1 | l2: h1",
        "dst 02:00:00:00:00:02 → out 2 | l2: h2",
        "dst 02:00:00:00:00:03 → out 3 | l2: h3",
        "dst 02:00:00:00:00:04 → out 1 | l2: h4",
        "in 2, dst ff:ff:ff:ff:ff:ff → out 3 | l2: flood",
        "in 3, dst ff:ff:ff:ff:ff:ff → out 2 | l2: flood",
      ],
    },
    {
      name: "a host with one link sends all it sends there, broadcast too, but what it addresses to itself",
      member: "h2",
      role: "forward",
      want: ["in self, dst 02:00:00:00:00:02 → drop | l2: all", "in self → out 1 | l2: all"],
    },
    {
      name: "a host acquires its name and broadcast",
      member: "h2",
      role: "acquire",
      want: ["dst 02:00:00:00:00:02 → receive | l2: h2", "dst ff:ff:ff:ff:ff:ff → receive | l2: flood"],
    },
    { name: "a switch forwards all it acquires", member: "s2", role: "acquire", want: ["any → forward | l2: transit"] },
  ];
  test.each(CASES)("$name", ({ member, role, want }) => {
    expect(rowsOf(ring(4), member, role)).toEqual(want);
  });
});

describe("a ring of switches by l2", () => {
  test.each([3, 4, 5])("%i switches: fully reachable, no loops (the analysis)", (n) => {
    const props = report(new Analysis(compile(load(ring(n))))).components[0]?.properties ?? [];
    const holds = (name: string): boolean | undefined => props.find((p) => p.name === name)?.holds;
    expect(holds("No_routing_loops")).toBe(true);
    expect(holds("Fully_reachable")).toBe(true);
  });

  /** Each host sends a frame to `dst(host)`; the hosts that received each, in order of sender. */
  function deliveries(engine: Engine, n: number, dst: (h: number) => bigint): string[][] {
    const got: string[][] = Array.from({ length: n }, () => []);
    let sender = 0;
    const off = engine.onDeliver(
      (member) => void got[sender]?.push(engine.installed.compiled.members[member]?.key ?? "?"),
    );
    for (sender = 0; sender < n; sender++) {
      const bytes = ethernetFrame({ dst: dst(sender + 1), src: mac(sender + 1) });
      engine.run(batchOf([{ endpoint: sender, bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0 }]));
    }
    off?.();
    return got.map((g) => g.sort());
  }

  test.each([
    { n: 4, down: [] as string[] },
    { n: 5, down: [] as string[] },
    { n: 4, down: ["r1"] },
    { n: 5, down: ["r2", "r4"] },
  ])("$n switches, $down down: a broadcast reaches each other host once, unicast each host", ({ n, down }) => {
    const endpoints = Array.from({ length: n }, (_, i) => `lan:h${i + 1}`);
    const engine = Engine.open({ compiled: compile(load(ring(n))), endpoints });
    engine.connect({ deliveries: true });
    try {
      for (const l of down) expect(engine.setDown({ link: `lan.${l}` }, true).rerouted).toBeDefined();
      // Two links down split a ring in two: each host reaches the hosts of its own part.
      const part = (h: number): number[] => {
        if (down.length < 2) return Array.from({ length: n }, (_, i) => i + 1);
        const cut = down.map((l) => Number(l.slice(1))).sort((a, b) => a - b);
        const [a = 0, b = 0] = cut;
        const inner = h > a && h <= b;
        return Array.from({ length: n }, (_, i) => i + 1).filter((x) => (x > a && x <= b) === inner);
      };
      const want = (h: number): string[] =>
        part(h)
          .filter((x) => x !== h)
          .map((x) => `h${x}`)
          .sort();
      expect(deliveries(engine, n, () => BROADCAST)).toEqual(Array.from({ length: n }, (_, i) => want(i + 1)));
      for (const to of [1, 2]) {
        const got = deliveries(engine, n, () => mac(to));
        got.forEach((g, i) => expect(g).toEqual(i + 1 !== to && part(i + 1).includes(to) ? [`h${to}`] : []));
      }
    } finally {
      engine.stop();
    }
  });
});

describe("hand rows beside l2's", () => {
  test("a hand row comes first; the l2 row for the same match is left out, said once", () => {
    const notes: string[] = [];
    const text = ring(4, { tables: { s1: { forward: [{ match: { dst: macText(2) }, out: "drop" }] } } });
    const spec = load(text, (l) => notes.push(l));
    const rows = spec.networks[0]?.tables.get("s1")?.forward?.rows ?? [];
    expect(rows.map((x) => (x.intent === undefined ? "hand" : x.intent.destination))).toEqual([
      "hand",
      "h1",
      "h3",
      "h4",
      "flood",
      "flood",
      "flood",
    ]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("1 row of the l2 intent for s1's forward table is written by hand here");
  });
});

describe("bad l2 intents: one line each, naming the place and the fix", () => {
  const CASES: { name: string; text: string; want: string }[] = [
    {
      name: "l2 on an IP network",
      text: JSON.stringify({
        networks: {
          ip: {
            header: "ipv4",
            members: { r1: { name: "10.0.0.1", role: "infra" }, h1: { name: "10.0.0.2" } },
            links: [{ from: "h1.1", to: "r1.1", mode: "two-way" }],
            l2: {},
          },
        },
      }),
      want: "networks.ip.l2: l2 is for Ethernet networks: ip's header is ipv4 (write l2: on an ethernet network",
    },
    {
      name: "a cost for a link that is not there",
      text: ring(3, { l2: { costs: { r9: 2 } } }),
      want: "networks.lan.l2.costs.r9: no link named 'r9' in network lan",
    },
    {
      name: "a demand naming an unknown member",
      text: ring(3, { demands: [{ from: "h1", to: "h9" }] }),
      want: "networks.lan.demands[0].to: no member 'h9' in network lan",
    },
    {
      name: "an unknown key in l2",
      text: ring(3, { l2: { flood: true } }),
      want: "networks.lan.l2.flood: unknown key",
    },
  ];
  test.each(CASES)("$name", ({ text, want }) => {
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(want);
  });
});
