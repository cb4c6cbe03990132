// `strata run --updates FILE` (src/run/updates.ts): a capture replayed with an
// update in the middle gives, before the update, the fates of the old
// description and after it those of the new one — the same outputs as two plain
// replays of the two halves. Links and members down drop with their reasons.
// A bad updates file is refused before any packet, with file:line:col.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import type { Summary } from "../../src/engine/summary.js";
import { loadSchema } from "../../src/description/schema.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { loadUpdates, parseTime, parseUpdates, prepareUpdates, UPDATES_SCHEMA_FILE } from "../../src/run/updates.js";
import { pcapFile } from "../pcap/builders.js";
import { ethernetFrame } from "../pipeline/helpers/packets.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = readFileSync(join(root, "test/fixtures/specs/hub.yaml"), "utf8");
/** The hub sends h2's frames to h3 instead: one forward row's action changes. */
const MISROUTED = HUB.replace(
  `- { match: { dst: "02:00:00:00:00:02" }, out: 2 }`,
  `- { match: { dst: "02:00:00:00:00:02" }, out: 3 }`,
);
/** The hub has a row more: frames to an unknown address go to h1. */
const WIDER = HUB.replace(
  `- { match: { dst: "02:00:00:00:00:03" }, out: 3 }`,
  `- { match: { dst: "02:00:00:00:00:03" }, out: 3 }\n          - { match: { dst: "02:00:00:00:00:09" }, out: 1 }`,
);
/** MISROUTED with its members and links written in another order: the same topology, one row's action changed. */
const REORDERED = (() => {
  const doc = parseYaml(MISROUTED) as { networks: { lan: { members: Record<string, unknown>; links: unknown[] } } };
  const lan = doc.networks.lan;
  lan.members = Object.fromEntries(Object.entries(lan.members).reverse());
  lan.links = [...lan.links].reverse();
  return stringifyYaml(doc);
})();
/** A member more: the topology changes. */
const GROWN = HUB.replace(
  `      hub: { name: "02:00:00:00:00:fe", role: infra }`,
  `      hub: { name: "02:00:00:00:00:fe", role: infra }\n      h4:  { name: "02:00:00:00:00:04" }`,
);

const T0 = 1_700_000_000;
/** Frame i, sent by h1 at T0 + i seconds (+ i ms): to h2, h3, broadcast or an unknown address in turn. */
const dstOf = (i: number): bigint => [0x020000000002n, 0x020000000003n, 0xffffffffffffn, 0x020000000009n][i % 4] ?? 0n;
const frames = (from: number, to: number): Uint8Array =>
  pcapFile(
    {},
    Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return {
        sec: T0 + i,
        frac: i * 1000,
        data: ethernetFrame({
          dst: dstOf(i),
          src: 0x020000000001n,
          payload: new Uint8Array(40 + (i % 17)).fill(i & 0xff),
        }),
      };
    }),
  );

const N = 600; // more than two batches of 256: updates fall inside batches
let dir = "";
const at = (name: string): string => join(dir, name);
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-updates-"));
  for (const [name, text] of Object.entries({
    "hub.yaml": HUB,
    "misrouted.yaml": MISROUTED,
    "reordered.yaml": REORDERED,
    "wider.yaml": WIDER,
    "grown.yaml": GROWN,
  }))
    writeFileSync(at(name), text);
  writeFileSync(at("all.pcap"), frames(0, N));
  writeFileSync(at("first.pcap"), frames(0, 301));
  writeFileSync(at("second.pcap"), frames(301, N));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stderr: string;
  summary: Summary | undefined;
  /** Capture files' records (without the 24-byte file header), by path under --out. */
  records: Map<string, Buffer>;
}

async function run(spec: string, capture: string, updates?: string): Promise<Run> {
  const out = mkdtempSync(join(dir, "out-"));
  const io = memoryIo();
  const code = await main(
    [
      "run",
      at(spec),
      "--in",
      `lan:h1.1=${at(capture)}`,
      "--out",
      out,
      ...(updates === undefined ? [] : ["--updates", at(updates)]),
    ],
    io,
  );
  const records = new Map<string, Buffer>();
  let summary: Summary | undefined;
  try {
    summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    for (const sub of ["links", "delivered"])
      for (const f of readdirSync(join(out, sub)))
        records.set(`${sub}/${f}`, readFileSync(join(out, sub, f)).subarray(24));
  } catch {
    summary = undefined;
  }
  return { code, stderr: io.stderr.text, summary, records };
}

describe("strata run --updates: a replay with a description changed in the middle", () => {
  it.each([
    {
      name: "a row's action modified",
      next: "misrouted.yaml",
      change: { inserted: 0, modified: 1, deleted: 0, tablesBuilt: 0, tablesRemoved: 0, rebuilt: false },
    },
    // Members and links are known by identity, not by position: the same topology, numbered as it runs.
    {
      name: "a row's action modified, members and links written in another order",
      next: "reordered.yaml",
      change: { inserted: 0, modified: 1, deleted: 0, tablesBuilt: 0, tablesRemoved: 0, rebuilt: false },
    },
    // The hub's forward table keeps its written order by priority (n − index): the 3 rows above the new one move up,
    // deleted and inserted again in the same batch.
    {
      name: "a row inserted",
      next: "wider.yaml",
      change: { inserted: 4, modified: 0, deleted: 3, tablesBuilt: 0, tablesRemoved: 0, rebuilt: false },
    },
  ])(
    "$name: the old description's fates before, the new one's after, as two plain replays of the halves",
    async ({ next, change }) => {
      writeFileSync(
        at(`${next}.updates.yaml`),
        `# packet 301 is the first at or after this time\n- { at: ${T0 + 300}.5, description: ${next} }\n`,
      );
      const whole = await run("hub.yaml", "all.pcap", `${next}.updates.yaml`);
      const first = await run("hub.yaml", "first.pcap");
      const second = await run(next, "second.pcap");
      expect(whole.stderr).toBe("");
      expect(whole.code).toBe(0);
      expect(whole.summary?.updates).toEqual([
        { at: `${T0 + 300}.5`, time: `${T0 + 300}.500000000`, description: next, packet: 301, change },
      ]);
      // Every capture of the whole replay is the first half's records, then the second half's.
      const files = new Set([...first.records.keys(), ...second.records.keys()]);
      expect(new Set(whole.records.keys())).toEqual(files);
      for (const f of files)
        expect(whole.records.get(f), f).toEqual(
          Buffer.concat([first.records.get(f) ?? Buffer.alloc(0), second.records.get(f) ?? Buffer.alloc(0)]),
        );
      const sum = (k: keyof Summary["packets"]): number =>
        (first.summary?.packets[k] ?? 0) + (second.summary?.packets[k] ?? 0);
      expect(whole.summary?.packets).toEqual({
        injected: sum("injected"),
        copies: sum("copies"),
        delivered: sum("delivered"),
        dropped: sum("dropped"),
        exited: sum("exited"),
      });
      const drops = (s: Summary | undefined): Record<string, number> =>
        Object.fromEntries(Object.entries(s?.drops ?? {}).map(([k, v]) => [k, v ?? 0]));
      const both = { ...drops(first.summary) };
      for (const [k, v] of Object.entries(drops(second.summary))) both[k] = (both[k] ?? 0) + v;
      expect(drops(whole.summary)).toEqual(both);
      // The halves differ: the update changed something the packets show.
      expect(drops(first.summary)["forward-miss"] ?? 0).toBeGreaterThan(0);
    },
  );

  it(
    "trace.jsonl names rows by the description in force: a row that moved " + "down is named by its new place",
    async () => {
      writeFileSync(at("trace.updates.yaml"), `- { at: ${T0 + 300}.5, description: wider.yaml }\n`);
      const out = mkdtempSync(join(dir, "out-"));
      const io = memoryIo();
      expect(
        await main(
          [
            "run",
            at("hub.yaml"),
            "--in",
            `lan:h1.1=${at("all.pcap")}`,
            "--out",
            out,
            "--trace",
            "--updates",
            at("trace.updates.yaml"),
          ],
          io,
        ),
      ).toBe(0);
      const hubForward = new Map<number, unknown>();
      for (const line of readFileSync(join(out, "trace.jsonl"), "utf8").split("\n")) {
        if (line === "") continue;
        const t = JSON.parse(line) as {
          packet: number;
          steps: { step: string; member?: string; row?: unknown; rule?: string }[];
        };
        const s = t.steps.find((x) => x.step === "forward" && x.member === "lan.hub");
        hubForward.set(t.packet, s === undefined ? undefined : [s.row, s.rule]);
      }
      // Broadcasts from h1 (frames 298 and 302) match the same entry; wider.yaml wrote a row above it.
      expect(hubForward.get(298)).toEqual([3, "in 1, dst ff:ff:ff:ff:ff:ff → out 2, 3"]);
      expect(hubForward.get(302)).toEqual([4, "in 1, dst ff:ff:ff:ff:ff:ff → out 2, 3"]);
      // Frames to 02:00:00:00:00:09 miss before and take the new row after.
      expect(hubForward.get(299)).toEqual([null, null]);
      expect(hubForward.get(303)).toEqual([3, "dst 02:00:00:00:00:09 → out 1"]);
    },
  );

  it(
    "a link down, then up, and a member down: drops named for them, counted " + "for exactly the packets in between",
    async () => {
      writeFileSync(
        at("down.updates.yaml"),
        [
          `- { at: ${T0 + 100}, down: { link: lan:h3.1 } }`,
          `- { at: "${new Date((T0 + 200) * 1000).toISOString()}", up: { link: lan.h3.1-hub.3 } }`,
          `- { at: ${T0 + 400}, down: { member: lan:h2 } }`,
          `- { at: ${T0 + 10_000}, up: { member: lan:h2 } }`,
          "",
        ].join("\n"),
      );
      const r = await run("hub.yaml", "all.pcap", "down.updates.yaml");
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      // Frames 100..199 to h3 (i % 4 = 1) and broadcast (i % 4 = 2) cross hub → h3: dropped at the hub.
      const count = (from: number, to: number, f: (i: number) => boolean): number =>
        Array.from({ length: to - from }, (_, k) => from + k).filter(f).length;
      const linkDown = count(100, 200, (i) => i % 4 === 1 || i % 4 === 2);
      // From frame 400, h2 takes nothing: frames to h2 and broadcasts reach it.
      const memberDown = count(400, N, (i) => i % 4 === 0 || i % 4 === 2);
      expect(r.summary?.members["lan.hub"]?.drops["link-down"]).toBe(linkDown);
      expect(r.summary?.members["lan.h2"]?.drops["member-down"]).toBe(memberDown);
      expect(r.summary?.updates?.map((u) => [u.packet, u.links ?? u.members])).toEqual([
        [100, ["lan.h3.1-hub.3"]],
        [200, ["lan.h3.1-hub.3"]],
        [400, ["lan.h2"]],
        [null, undefined],
      ]);
    },
  );
});

describe("strata run --updates: a bad updates file is refused before any packet (exit 2)", () => {
  it.each([
    { name: "empty", text: "", error: /^strata: \S*\/u\.yaml: the updates file is empty/ },
    {
      name: "not a list",
      text: "at: 1\n",
      error: new RegExp(
        [
          String.raw`^strata: \S*\/u\.yaml: 1:1: must be a list of at most 10,000 updates,`,
          String.raw` each a map with at and one of description, down, up, got a map$`,
        ].join(""),
      ),
    },
    {
      name: "more than 10,000 updates",
      text: Array.from({ length: 10_001 }, (_, i) => `- { at: ${T0 + i}, down: { member: lan:h2 } }\n`).join(""),
      error: new RegExp(
        [
          String.raw`^strata: \S*\/u\.yaml: 1:1: has 10,001 items: at most 10,000 are taken`,
          String.raw` \(expected a list of at most 10,000 updates, `,
        ].join(""),
      ),
    },
    {
      name: "a description path to a file that is no description: none of it quoted",
      text: "- { at: 1, description: shadow }\n",
      error: new RegExp(
        [
          String.raw`^strata: \S*\/u\.yaml: 1:25 \[0\]\.description: shadow: this is not a`,
          String.raw` description: it has no key networks`,
          String.raw` \(give the path of a network description, as docs\/spec\.md`,
          String.raw` describes\)$`,
        ].join(""),
      ),
    },
    {
      name: "no change",
      text: "- { at: 1 }\n",
      error: /^strata: \S*\/u\.yaml: 1:3 \[0\]: an update needs what happens: description, down or up/,
    },
    {
      name: "two changes",
      text: "- { at: 1, description: misrouted.yaml, down: { member: lan:h2 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:3 \[0\]: one update, one change: this one has description and down/,
    },
    {
      name: "an unknown key",
      text: "- { at: 1, dwon: { member: lan:h2 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:12 \[0\]\.dwon: /,
    },
    {
      name: "a time that is not one",
      text: "- { at: yesterday, down: { member: lan:h2 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:9 \[0\]\.at: 'yesterday' is not a time/,
    },
    {
      name: "an ISO time without a zone",
      text: '- { at: "2023-11-14T22:13:20", down: { member: lan:h2 } }\n',
      error: /has no time zone/,
    },
    {
      name: "a date that does not exist",
      text: '- { at: "2023-02-30T00:00:00Z", down: { member: lan:h2 } }\n',
      error: /is not a date and time/,
    },
    {
      name: "out of order",
      text: `- { at: ${T0 + 5}, down: { member: lan:h2 } }\n- { at: ${T0 + 4}, up: { member: lan:h2 } }\n`,
      error: /^strata: \S*\/u\.yaml: 2:9 \[1\]\.at: updates go in time order/,
    },
    {
      name: "two targets",
      text: "- { at: 1, down: { member: lan:h2, link: lan:h1.1 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:18 \[0\]\.down: down names one thing: this names member and link/,
    },
    {
      name: "an unknown link",
      text: "- { at: 1, down: { link: lan:h1.9 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:26 \[0\]\.down\.link: lan\.h1 has no link with identifier 9/,
    },
    {
      name: "an unknown member",
      text: "- { at: 1, up: { member: lan:h7 } }\n",
      error: /^strata: \S*\/u\.yaml: 1:26 \[0\]\.up\.member: no member 'lan:h7'/,
    },
    {
      name: "a description that is not there",
      text: "- { at: 1, description: nosuch.yaml }\n",
      error: /^strata: \S*\/u\.yaml: 1:25 \[0\]\.description: nosuch\.yaml: cannot read file: no such file/,
    },
    {
      name: "an invalid description: its own errors",
      text: "- { at: 1, description: broken.yaml }\n",
      error: /^strata: \S*\/broken\.yaml: 8:13 networks\.lan\.header: unknown header design 'ethernt'/,
    },
    {
      name: "a description that changes the topology",
      text: "- { at: 1, description: grown.yaml }\n",
      error: new RegExp(
        [
          String.raw`^strata: \S*\/u\.yaml: 1:25 \[0\]\.description: this description`,
          String.raw` changes what a replay writes its captures for: member lan\.h4 added`,
        ].join(""),
      ),
    },
    {
      name: "a link of a member a later description took away",
      text: `- { at: 1, description: misrouted.yaml }\n- { at: 2, down: { link: lan:h3.4 } }\n`,
      error: /^strata: \S*\/u\.yaml: 2:26 \[1\]\.down\.link: lan\.h3 has no link with identifier 4/,
    },
  ])("$name", async ({ text, error }) => {
    writeFileSync(at("broken.yaml"), HUB.replace("header: ethernet", "header: ethernt"));
    writeFileSync(at("shadow"), "root:$6$salt$hash:19000:0:99999:7:::\nalice:$6$pepper$hash2:19000:0:99999:7:::\n");
    writeFileSync(at("u.yaml"), text);
    const r = await run("hub.yaml", "all.pcap", "u.yaml");
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toMatch(error);
    expect(r.stderr).not.toMatch(/\$6\$/);
    expect(r.summary).toBeUndefined();
  });
});

describe("strata run --updates: memory grows with the distinct descriptions, not with the updates", () => {
  it("400 updates flapping between two descriptions keep two texts, and replay as the two would", async () => {
    const flaps = 400;
    const lines = Array.from(
      { length: flaps },
      (_, i) => `- { at: ${T0 + i}.5, description: ${i % 2 === 0 ? "misrouted.yaml" : "hub.yaml"} }\n`,
    );
    writeFileSync(at("flaps.yaml"), lines.join(""));
    const compiled = compile(loadSpec(at("hub.yaml")));
    const prepared = prepareUpdates(loadUpdates(at("flaps.yaml")), compiled, ["lan:h1.1"]);
    expect(prepared.length).toBe(flaps);
    expect(prepared.texts).toBe(2);
    const r = await run("hub.yaml", "all.pcap", "flaps.yaml");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    // Frame i (at T0 + i) runs after update i − 1: misrouted for odd i < 400, as written for even ones and those after
    // the last update.
    expect(r.summary?.updates?.filter((u) => u.packet !== null)).toHaveLength(flaps);
    expect(r.summary?.updates?.[0]?.change).toEqual({
      inserted: 0,
      modified: 1,
      deleted: 0,
      tablesBuilt: 0,
      tablesRemoved: 0,
      rebuilt: false,
    });
    expect(r.summary?.updates?.[1]?.change).toEqual({
      inserted: 0,
      modified: 1,
      deleted: 0,
      tablesBuilt: 0,
      tablesRemoved: 0,
      rebuilt: false,
    });
  });
});

describe("update times", () => {
  it.each([
    { at: 1700000000, sec: 1700000000, nsec: 0 },
    { at: 1700000000.25, sec: 1700000000, nsec: 250000000 },
    // As written, not as the nearest double (1591780794.799999952…).
    { at: 1591780794.8, sec: 1591780794, nsec: 800000000 },
    { at: 1e-7, sec: 0, nsec: 100 },
    { at: "1700000000.123456789", sec: 1700000000, nsec: 123456789 },
    { at: "2023-11-14T22:13:20Z", sec: 1700000000, nsec: 0 },
    { at: "2023-11-14T22:13:20.000000001Z", sec: 1700000000, nsec: 1 },
    { at: "2023-11-14T23:13:20.5+01:00", sec: 1700000000, nsec: 500000000 },
  ])("$at", ({ at: t, sec, nsec }) => {
    expect(parseTime(t)).toMatchObject({ sec, nsec });
  });
});

describe("docs/updates.md", () => {
  const doc = readFileSync(join(root, "docs/updates.md"), "utf8");
  it("its example reads as an updates file", () => {
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
    expect(parseUpdates(example, "docs/updates.md").map((u) => u.kind)).toEqual([
      "description",
      "down",
      "up",
      "down",
      "up",
    ]);
  });
  it("its tables name every key the schema has", () => {
    const defs = loadSchema(UPDATES_SCHEMA_FILE)["$defs"] as Record<string, { properties?: Record<string, unknown> }>;
    const keys = [...Object.keys(defs["update"]?.properties ?? {}), ...Object.keys(defs["target"]?.properties ?? {})];
    for (const key of keys) expect(doc, key).toMatch(new RegExp(`(\\| |/ )\`${key}[\\s:\`]`));
  });
});
