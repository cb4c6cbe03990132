// The overlays intent: a full mesh of overlay links between members of a
// network, each direction a session of the underlay member on its machine. Per
// encapsulation (vxlan, gre, ip-in-ip) the compiled rows carry the link's
// identifier and provenance, the analysis says the overlay fully reachable and
// its links implemented, and the emulation delivers between every pair; the
// identifiers are distinct, from the range, and kept when the mesh grows; hand
// rows beside the intent's win; bad overlays are one line each.

import type { Engine } from "../../src/engine/engine.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { errorsOf as errorsOfText, load as loadText } from "./helpers/load.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { defineDescription, toYaml } from "../../src/api/description.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import type { Allocation, Spec } from "../../src/description/types.js";
import { analysed, type Kind, KINDS, meshDescription, replayMesh, two, type Underlay } from "./helpers/overlays.js";

type Doc = Record<string, unknown>;

/** Three sites on one router, a fourth behind a second. */
const STAR: Underlay = {
  sites: 4,
  routers: 2,
  links: [
    ["s0", "r0"],
    ["s1", "r0"],
    ["s2", "r0"],
    ["r0", "r1"],
    ["s3", "r1"],
  ],
};

const load = (doc: Doc, previous?: Allocation, warn?: (line: string) => void): Spec =>
  loadText(JSON.stringify(doc), warn, previous);
const errorsOf = (doc: Doc): string[] => errorsOfText(JSON.stringify(doc));

/** A member's compiled rows of one role, each as "text | provenance". */
function rowsOf(spec: Spec, network: string, member: string, role: "transmit" | "send" | "receive"): string[] {
  const rows = spec.networks.find((n) => n.name === network)?.tables.get(member)?.[role]?.rows ?? [];
  const c = compile(spec);
  const net = c.networks.findIndex((n) => n.name === network);
  const texts = c.members.find((m) => m.key === member && m.network === net)?.tables[role]?.rows ?? [];
  return texts.map((t) => {
    const r = t.row < 0 ? undefined : rows[t.row];
    return `${t.text} | ${r?.intent === undefined ? "hand" : `${r.intent.intent}: ${r.intent.destination}`}`;
  });
}

const ALL_HOLD = {
  Fully_reachable: true,
  No_routing_loops: true,
  Network_satisfies_communication_demands: true,
  Underlay_satisfies_layering_demands: true,
};

describe("overlays rows, per encapsulation", () => {
  const CASES: { kind: Kind; send: string; receive: string; transmit: string }[] = [
    {
      kind: KINDS[0]!,
      send:
        "session 1 → push src 10.0.0.1, dst 10.0.0.2, ttl 64, dscp 0, sport 0, dport 4789, vni 100 | " +
        "overlays: m0-m1 (vni 100)",
      receive: "src 10.0.0.2, vni 100 → pop, to o in 1 | overlays: m0-m1 (vni 100)",
      transmit: "out 1 → session u.1 | overlays: m0-m1 (vni 100)",
    },
    {
      kind: KINDS[1]!,
      send:
        "session 1 → push src 10.0.0.1, dst 10.0.0.2, ttl 64, dscp 0, type 2048, key 100, keyed 1 | " +
        "overlays: m0-m1 (key 100)",
      receive: "src 10.0.0.2, type 2048, key 100, keyed 1 → pop, to o in 1 | overlays: m0-m1 (key 100)",
      transmit: "out 1 → session u.1 | overlays: m0-m1 (key 100)",
    },
    {
      kind: KINDS[2]!,
      send: "session 1 → push src 10.0.0.1, dst 10.0.0.2, proto 4, ttl 64, dscp 0 | overlays: m0-m1 (session 1)",
      receive: "src 10.0.0.2, proto 4 → pop, to o in 1 | overlays: m0-m1 (session 1)",
      transmit: "out 1 → session u.1 | overlays: m0-m1 (session 1)",
    },
  ];
  test.each(CASES)("$kind.encapsulation: m0's first session, its receive row, its transmit row", (c) => {
    const ids = c.kind.encapsulation === "ip-in-ip" ? {} : { ids: "100..199" };
    const spec = load(meshDescription(c.kind, STAR, ids));
    expect(rowsOf(spec, "u", "s0", "send")[0]).toBe(c.send);
    expect(rowsOf(spec, "u", "s0", "receive")[0]).toBe(c.receive);
    expect(rowsOf(spec, "o", "m0", "transmit")[0]).toBe(c.transmit);
  });

  test.each(KINDS)("$encapsulation: fully meshed (the analysis), every pair delivered (the emulation)", (kind) => {
    const spec = load(meshDescription(kind, STAR));
    expect(spec.networks.find((n) => n.name === "o")?.links.map((l) => l.name)).toEqual([
      "m0-m1",
      "m0-m2",
      "m0-m3",
      "m1-m2",
      "m1-m3",
      "m2-m3",
    ]);
    expect(analysed(spec)).toEqual(ALL_HOLD);
    const { sent, got } = replayMesh(spec, kind);
    expect(got).toEqual(sent);
  });
});

describe("identifiers (seed 000)", () => {
  const vxlan = KINDS[0]!;
  const idsOf = (spec: Spec): Record<string, number> =>
    Object.fromEntries((spec.allocation?.overlays ?? []).map((o) => [o.link, o.id]));

  test("the lowest free from the range, in the order of the pairs, one per link, none two links alike", () => {
    expect(idsOf(load(meshDescription(vxlan, STAR, { ids: "5000..5099" })))).toEqual({
      "m0-m1": 5000,
      "m0-m2": 5001,
      "m0-m3": 5002,
      "m1-m2": 5003,
      "m1-m3": 5004,
      "m2-m3": 5005,
    });
  });

  test("an identifier the underlay's hand send rows write is not given to a link", () => {
    const doc = meshDescription(vxlan, STAR, { ids: "5000..5099" });
    const u = (doc["networks"] as Record<string, Doc>)["u"] as Doc;
    u["tables"] = { r0: { send: [{ session: 1, header: { dst: "10.0.0.1", vni: 5001 } }] } };
    const ids = idsOf(load(doc));
    expect(ids["m0-m2"]).toBe(5002);
    expect(Object.values(ids)).not.toContain(5001);
  });

  test("stable: given the earlier allocation, the links that remain keep their ids as members join or leave", () => {
    const first = load(meshDescription(vxlan, STAR, { ids: "5000..5099" }));
    // m4 (on a new site s4) joins: its links take new ids; the others keep theirs.
    const grown: Underlay = { ...STAR, sites: 5, links: [...STAR.links, ["s4", "r1"]] };
    const second = load(meshDescription(vxlan, grown, { ids: "5000..5099" }), first.allocation);
    const before = idsOf(first);
    const after = idsOf(second);
    for (const [link, id] of Object.entries(before)) expect(after[link], link).toBe(id);
    expect(new Set(Object.values(after)).size).toBe(Object.keys(after).length);
    // m0 leaves the mesh: what remains keeps its ids (and the freed ones are not taken by anything).
    const third = load(meshDescription(vxlan, grown, { ids: "5000..5099", members: ["m1", "m2", "m3", "m4"] }), {
      ...second.allocation!,
    });
    for (const [link, id] of Object.entries(idsOf(third))) expect(id, link).toBe(after[link]);
    // The underlay's session ids are kept the same way.
    const sessions = (s: Spec): Record<string, number> =>
      Object.fromEntries((s.allocation?.sessions ?? []).map((x) => [`${x.member}>${x.name}`, x.session]));
    const s1 = sessions(first);
    const s2 = sessions(second);
    for (const [k, v] of Object.entries(s1)) expect(s2[k], k).toBe(v);
  });

  // Reordering `members:` is no change: the links are named, and so keyed, by the pair, never by the list's order.
  const ORDERS: { name: string; members: string[] }[] = [
    { name: "reversed", members: ["m3", "m2", "m1", "m0"] },
    { name: "shuffled", members: ["m2", "m0", "m3", "m1"] },
    { name: "a member twice", members: ["m1", "m0", "m3", "m1", "m2"] },
  ];
  test.each(ORDERS)("members: $name gives the same links, ids, sessions and rows as in key order", ({ members }) => {
    const rows = (s: Spec): string[] =>
      compile(s).members.flatMap((m) =>
        Object.values(m.tables).flatMap((t) => (t?.rows ?? []).map((r) => `${m.network} ${m.key} ${r.text}`)),
      );
    const links = (s: Spec): string[] => s.networks.flatMap((n) => n.links.map((l) => `${n.name}.${l.name}`));
    const sorted = load(meshDescription(vxlan, STAR, { ids: "5000..5099", members: ["m0", "m1", "m2", "m3"] }));
    const other = load(meshDescription(vxlan, STAR, { ids: "5000..5099", members }));
    expect(links(other)).toEqual(links(sorted));
    expect(idsOf(other)).toEqual(idsOf(sorted));
    expect(other.allocation).toEqual(sorted.allocation);
    expect(rows(other)).toEqual(rows(sorted));
    // Given the allocation made in key order, a reordered list keeps every id and session.
    const kept = load(meshDescription(vxlan, STAR, { ids: "5000..5099", members }), sorted.allocation);
    expect(kept.allocation).toEqual(sorted.allocation);
  });

  test("without the earlier allocation the same description gives the same ids (idempotent)", () => {
    const doc = meshDescription(vxlan, STAR);
    const a = load(doc);
    expect(load(doc, a.allocation).allocation).toEqual(a.allocation);
    expect(load(doc).allocation).toEqual(a.allocation);
  });
});

describe("an underlay without routes:", () => {
  test("its forwarding written by hand, the intent adds what the mesh's underlay members acquire", () => {
    const kind = KINDS[0]!;
    const pair: Underlay = { sites: 2, routers: 0, links: [["s0", "s1"]] };
    const doc = meshDescription(kind, pair) as { networks: { u: Doc } };
    delete doc.networks.u["routes"];
    doc.networks.u["tables"] = { s0: { forward: [{ in: "self", out: 1 }] }, s1: { forward: [{ in: "self", out: 1 }] } };
    const spec = load(doc);
    const u = spec.networks.find((n) => n.name === "u");
    const acquire = u?.tables.get("s1")?.acquire?.rows.map((r) => `${r.intent?.intent}: ${r.intent?.destination}`);
    expect(acquire).toEqual(["overlays: s1"]);
    const { sent, got } = replayMesh(spec, kind);
    expect(sent).toHaveLength(2);
    expect(got).toEqual(sent);
  });
});

describe("recomputed when the underlay's link goes down", () => {
  test.each(KINDS)("$encapsulation: the routes go round it and every pair is still delivered", (kind) => {
    // Two ways between the routers: r0-r1 direct, and through r2.
    const ring: Underlay = { ...STAR, routers: 3, links: [...STAR.links, ["r0", "r2"], ["r2", "r1"]] };
    const spec = load(meshDescription(kind, ring));
    const down = (engine: Engine): void => {
      expect(engine.setDown({ link: "u.r0-r1" }, true).rerouted?.modified).toBeGreaterThan(0);
    };
    const { sent, got } = replayMesh(spec, kind, down);
    expect(got).toEqual(sent);
  });
});

describe("hand rows beside the overlays intent's", () => {
  test("a hand transmit row for a mesh link comes first and wins; the intent's for it is left out, said once", () => {
    const notes: string[] = [];
    const doc = meshDescription(
      KINDS[0]!,
      STAR,
      {},
      { tables: { m0: { transmit: [{ out: "m0-m1", via: "physical" }] } } },
    );
    const spec = load(doc, undefined, (l) => notes.push(l));
    expect(rowsOf(spec, "o", "m0", "transmit")).toEqual([
      "out 1 → physical | hand",
      "out 2 → session u.2 | overlays: m0-m2 (vni 2)",
      "out 3 → session u.3 | overlays: m0-m3 (vni 3)",
    ]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("1 row of the overlays intent for m0's transmit table is written by hand here");
  });
});

describe("through the API", () => {
  test("a description in code with overlays: gives the same rows as its YAML", () => {
    const d = defineDescription({
      networks: {
        u: {
          header: "gre",
          members: { a: { name: "10.0.0.1" }, b: { name: "10.0.0.2" }, r: { name: "10.0.0.9", role: "infra" } },
          links: [
            { from: "a", to: "r", mode: "two-way" },
            { from: "b", to: "r", mode: "two-way" },
          ],
          routes: {},
        },
        o: {
          header: "ipv4",
          members: { x: { name: "192.168.0.1", machine: "a" }, y: { name: "192.168.0.2", machine: "b" } },
          overlays: { members: "*", underlay: "u", encapsulation: "gre", ids: "40..41" },
          routes: {},
        },
      },
    });
    const fromCode = parseSpec(JSON.stringify(d), "code.json");
    const fromYaml = parseSpec(toYaml(d), "code.yaml");
    const rows = (s: Spec): string[] =>
      compile(s).members.flatMap((m) =>
        Object.values(m.tables).flatMap((t) => (t?.rows ?? []).map((r) => `${m.key} ${r.text}`)),
      );
    expect(rows(fromYaml)).toEqual(rows(fromCode));
    expect(rows(fromCode)).toContain(
      "a session 1 → push src 10.0.0.1, dst 10.0.0.2, ttl 64, dscp 0, type 2048, key 40, keyed 1",
    );
  });
});

describe("bad overlays: one line each, naming the place and the fix", () => {
  const vxlan = KINDS[0]!;
  const with_ = (change: (nets: Record<string, Doc>) => void, overlays: Doc = {}, kind = vxlan): Doc => {
    const doc = meshDescription(kind, STAR, overlays);
    change(doc["networks"] as Record<string, Doc>);
    return doc;
  };
  const CASES: { name: string; doc: Doc; want: string }[] = [
    {
      name: "an unknown encapsulation",
      doc: meshDescription(vxlan, STAR, { encapsulation: "vxaln" }),
      want:
        "networks.o.overlays.encapsulation: unknown encapsulation 'vxaln' (did you mean 'vxlan'? " +
        "encapsulations: vxlan, gre, ip-in-ip)",
    },
    {
      name: "mpls, which names members by label",
      doc: meshDescription(vxlan, STAR, { encapsulation: "mpls" }),
      want: "networks.o.overlays.encapsulation: mpls is not an overlays encapsulation",
    },
    {
      name: "an encapsulation that cannot carry the overlay's design over the underlay's",
      doc: meshDescription(vxlan, STAR, { encapsulation: "ip-in-ip" }),
      want: "networks.o.overlays.encapsulation: ip-in-ip cannot carry o (header ethernet) over u (header vxlan)",
    },
    {
      name: "an underlay that does not exist",
      doc: meshDescription(vxlan, STAR, { underlay: "w" }),
      want: "networks.o.overlays.underlay: there is no network 'w' (",
    },
    {
      name: "a mesh member that is not a member",
      doc: meshDescription(vxlan, STAR, { members: ["m0", "m9"] }, { demands: undefined }),
      want: "networks.o.overlays.members[1]: no member 'm9' in network o (did you mean 'm0'?",
    },
    {
      name: "a mesh member not in the underlay (no underlay member on its machine)",
      doc: with_((n) => (((n["o"] as Doc)["members"] as Record<string, Doc>)["m3"] = { name: "02:00:00:00:00:09" })),
      want:
        "networks.o.overlays: m3 is not in the underlay: no member of u runs on its machine m3 " +
        "(give u a member with machine: m3, or leave m3 out of the mesh (members:))",
    },
    {
      name: "two mesh members on one machine",
      doc: with_(
        (n) =>
          (((n["o"] as Doc)["members"] as Record<string, Doc>)["m3"] = { name: "02:00:00:00:00:09", machine: "s0" }),
      ),
      want:
        "networks.o.overlays: m0 and m3 both run on machine s0: u.s0 would carry both (an underlay member carries " +
        "one member of each overlay (seed §5.2.4): give m3 a machine of its own)",
    },
    {
      name: "mesh members with no underlay path between them",
      doc: with_((n) => ((n["u"] as Doc)["links"] = STAR.links.slice(0, 4).map(([a, b]) => two(a, b)))),
      want:
        "networks.o.overlays: m3 and m0 have no underlay path: no path over u's links leads from s3 to s0 through " +
        "infra members (link s3 to s0's side in u, or leave one of them out of the mesh)",
    },
    {
      name: "an id range too small for the mesh (exhausted)",
      doc: meshDescription(vxlan, STAR, { ids: "7..11" }),
      want:
        "networks.o.overlays: ids 7..11 hold 5 vnis, and the mesh of 4 members needs 6 " +
        "(write ids: 7..12 or wider, or leave members out of the mesh)",
    },
    {
      name: "a written link named as a mesh link",
      doc: with_((n) => ((n["o"] as Doc)["links"] = [{ name: "m1-m2", from: "m1", to: "m2", mode: "two-way" }])),
      want:
        "networks.o.links[0].name: link name 'm1-m2' is the name of o's overlay mesh link between m1 and m2 " +
        "(overlays:) (rename this link, or leave m1 or m2 out of overlays: members:)",
    },
    {
      name: "a written link whose default name is a mesh link's",
      doc: with_((n) => ((n["o"] as Doc)["links"] = [{ from: "m0", to: "m3", mode: "one-way" }])),
      want:
        "networks.o.links[0]: link name 'm0-m3' is the name of o's overlay mesh link between m0 and m3 (overlays:) " +
        "(give this link a name of its own: NAME, or leave m0 or m3 out of overlays: members:)",
    },
    {
      name: "a written link named as a mesh link of a reordered members: list",
      doc: with_((n) => ((n["o"] as Doc)["links"] = [{ name: "m0-m1", from: "m1", to: "m0", mode: "two-way" }]), {
        members: ["m1", "m0"],
      }),
      want: "networks.o.links[0].name: link name 'm0-m1' is the name of o's overlay mesh link between m0 and m1",
    },
    {
      name: "an id range past the field's width",
      doc: meshDescription(vxlan, STAR, { ids: "1..16777216" }),
      want: "networks.o.overlays.ids: ids 1..16777216 is not a range of vnis (24 bits)",
    },
    {
      name: "ids for ip-in-ip, which has none",
      doc: meshDescription(KINDS[2]!, STAR, { ids: "1..9" }),
      want: "networks.o.overlays.ids: ip-in-ip has no session identifier to allocate",
    },
  ];
  test.each(CASES)("$name", ({ doc, want }) => {
    const errors = errorsOf(doc);
    expect(errors, errors.join("\n")).toHaveLength(1);
    expect(errors[0]).toContain(want);
  });
});

describe("strata check", () => {
  const vxlan = KINDS[0]!;
  test("lists the overlay ids; --previous keeps them as a site joins; a bad overlay is one line, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-overlays-"));
    try {
      const grown: Underlay = { ...STAR, sites: 5, links: [...STAR.links, ["s4", "r1"]] };
      const files = {
        first: meshDescription(vxlan, STAR, { ids: "10..99" }),
        // m4 written first: the mesh is taken in key order all the same, so m4's links are m0-m4, …
        grown: meshDescription(vxlan, grown, { ids: "10..99", members: ["m4", "m0", "m1", "m2", "m3"] }),
        bad: meshDescription(vxlan, STAR, { ids: "10..14" }),
      };
      for (const [name, doc] of Object.entries(files)) writeFileSync(join(dir, `${name}.json`), JSON.stringify(doc));
      const check = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
        const io = memoryIo();
        const code = await main(["check", ...args, "--no-analyze"], io);
        return { code, out: io.stdout.text, err: io.stderr.text };
      };
      const ids = (out: string): string => /overlay identifiers: (.*)/.exec(out)?.[1] ?? "";
      const first = await check(join(dir, "first.json"));
      expect(first.code).toBe(0);
      expect(ids(first.out)).toBe("m0-m1 vni 10, m0-m2 vni 11, m0-m3 vni 12, m1-m2 vni 13, m1-m3 vni 14, m2-m3 vni 15");
      const fresh = await check(join(dir, "grown.json"));
      expect(ids(fresh.out)).toContain("m0-m1 vni 10, m0-m2 vni 11, m0-m3 vni 12, m0-m4 vni 13");
      const kept = await check(join(dir, "grown.json"), "--previous", join(dir, "first.json"));
      expect(ids(kept.out)).toBe(
        "m0-m1 vni 10, m0-m2 vni 11, m0-m3 vni 12, m0-m4 vni 16, m1-m2 vni 13, m1-m3 vni 14, m1-m4 vni 17, " +
          "m2-m3 vni 15, m2-m4 vni 18, m3-m4 vni 19",
      );
      const bad = await check(join(dir, "bad.json"));
      expect(bad.code).toBe(2);
      expect(bad.out).toBe("");
      expect(bad.err.split("\n").filter((l) => l !== "")).toHaveLength(1);
      expect(bad.err).toMatch(/^strata: .*bad\.json: \d+:\d+ networks\.o\.overlays: ids 10\.\.14 hold 5 vnis/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
