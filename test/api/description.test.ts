// Descriptions in code: every example read into the API's Description and written back with toYaml() is a file
// `strata check` accepts, whose compiled tables are the example's; and descriptions built by a program compile as the
// examples written by hand do.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import {
  type CompiledSpec,
  compileDescription,
  defineDescription,
  type Description,
  readDescription,
  SpecError,
  toYaml,
} from "../../src/index.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const EXAMPLES = REPLAY_EXAMPLES.flatMap((d) =>
  readdirSync(`examples/${d}`)
    .filter((f) => f === "network.yaml" || f === "merged.yaml")
    .map((f) => `examples/${d}/${f}`),
);

const dir = mkdtempSync(join(tmpdir(), "strata-api-description-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a description compiles to, without where its rows were written. */
function tables(c: CompiledSpec): unknown {
  return {
    members: c.members.map((m) => m.qualified),
    links: c.links.map((l) => [l.qualified, l.sender, l.senderOutLink, l.receivers]),
    tables: c.tables.map(({ spec: _spec, rows, ...layout }) => ({
      ...layout,
      rows: rows.map(({ at: _at, ...row }) => row),
    })),
  };
}

describe("every example through toYaml()", () => {
  test.each(EXAMPLES)("%s", async (file) => {
    const yaml = toYaml(readDescription(file));
    const written = join(dir, file.replaceAll("/", "-"));
    writeFileSync(written, yaml);
    const io = memoryIo();
    expect(await main(["check", written], io)).toBe(0);
    expect(io.stdout.text).toMatch(/: valid, \d+ network/);
    expect(tables(compileDescription(written))).toEqual(tables(compileDescription(file)));
  });
});

/** A one-way ring of n members in the cna header: each takes its own packets and passes the rest on. */
function ring(n: number): Description {
  const members = Array.from({ length: n }, (_, i) => `m${i}`);
  return defineDescription({
    networks: {
      ring: {
        header: "cna",
        members: Object.fromEntries(members.map((m, i) => [m, { name: i + 1 }])),
        links: members.map((m, i) => ({ from: `${m}.1`, to: `${members[(i + 1) % n]}.0` })),
        tables: Object.fromEntries(
          members.map((m, i) => [
            m,
            {
              acquire: [{ match: { dst: i + 1 }, do: "receive" }, { do: "forward" }],
              forward: [{ out: 1 }],
              receive: [{ do: "deliver" }],
            },
          ]),
        ),
      },
    },
  });
}

/** A hub and its hosts on Ethernet: the hub forwards by destination and floods broadcasts to every other port; the
 * hosts take broadcasts, but those in `own` take only frames addressed to them. */
function hub(hosts: number, own: readonly number[] = []): Description {
  const mac = (i: number): string => `02:00:00:00:00:${i.toString(16).padStart(2, "0")}`;
  const ids = Array.from({ length: hosts }, (_, i) => i + 1);
  const broadcast = "ff:ff:ff:ff:ff:ff";
  return {
    networks: {
      lan: {
        header: "ethernet",
        members: {
          hub: { name: mac(0xfe), role: "infra" },
          ...Object.fromEntries(ids.map((i) => [`h${i}`, { name: mac(i) }])),
        },
        links: ids.map((i) => ({ from: `h${i}.1`, to: `hub.${i}`, mode: "two-way" as const })),
        tables: {
          hub: {
            acquire: [{ do: "forward" }],
            forward: [
              ...ids.map((i) => ({ match: { dst: mac(i) }, out: i })),
              ...ids.map((i) => ({ in: i, match: { dst: broadcast }, out: ids.filter((j) => j !== i) })),
            ],
          },
          ...Object.fromEntries(
            ids.map((i) => [
              `h${i}`,
              {
                acquire: [
                  { match: { dst: mac(i) }, do: "receive" as const },
                  ...(own.includes(i) ? [] : [{ match: { dst: broadcast }, do: "receive" as const }]),
                ],
                receive: [{ do: "deliver" as const }],
              },
            ]),
          ),
        },
      },
    },
  };
}

describe("descriptions built by a program", () => {
  test.each([
    { name: "a ring of 4", built: ring(4), file: "examples/one-way-ring/network.yaml" },
    { name: "a hub of 4 hosts", built: hub(4, [4]), file: "examples/hub-and-spoke/network.yaml" },
  ])("$name compiles as $file does", ({ built, file }) => {
    expect(tables(compileDescription(built))).toEqual(tables(compileDescription(file)));
  });

  test("a description with a mistake is a SpecError naming the place", () => {
    const bad = ring(3);
    const links = bad.networks["ring"]?.links ?? [];
    const wrong = { networks: { ring: { ...bad.networks["ring"], links: [...links, { from: "m9.1", to: "m0.0" }] } } };
    const err = (() => {
      try {
        compileDescription(wrong as Description, "ring.yaml");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message).toMatch(/^ring\.yaml: .*networks\.ring\.links\[3\]\.from: .*m9/);
  });
});
