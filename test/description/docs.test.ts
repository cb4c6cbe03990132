// docs/spec.md stays true to the code: its complete examples load, its example is the
// fixture, its design table is the registry and its schema excerpt is the schema.

import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { parseSpec } from "../../src/description/load.js";
import { loadSchema } from "../../src/description/schema.js";
import { DESIGNS } from "../../src/wire/designs.js";

const DOC = readFileSync("docs/spec.md", "utf8");
const HUB = "test/fixtures/specs/hub.yaml";

function blocks(lang: string): string[] {
  return [...DOC.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "");
}

/** A copy without "description" keys (the excerpt leaves them out). */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "description")
      .map(([k, v]) => [k, withoutDescriptions(v)]),
  );
}

describe("docs/spec.md", () => {
  const complete = blocks("yaml").filter((b) => /^networks:/m.test(b) && !b.includes("…"));

  test("every complete YAML example loads", () => {
    expect(complete.length).toBeGreaterThan(0);
    for (const text of complete) expect(parseSpec(text, "docs/spec.md").networks.length).toBeGreaterThan(0);
  });

  test("the complete examples are the hub fixture and the layered ip-router example", () => {
    expect(complete).toContain(readFileSync(HUB, "utf8"));
    expect(complete).toContain(readFileSync("examples/ip-router/network.yaml", "utf8"));
  });

  test("the check output shown is what strata check prints", async () => {
    const shown = blocks("text").find((b) => b.startsWith(`$ strata check ${HUB}\n`));
    const io = memoryIo();
    await main(["check", HUB], io);
    expect(shown).toBe(`$ strata check ${HUB}\n${io.stdout.text}`);
  });

  test.each(DESIGNS.map((d) => [d.name, d] as const))(
    "the design table lists the fields of %s, read-only and session ones",
    (name, design) => {
      const row = DOC.slice(DOC.indexOf("### Designs"))
        .split("\n")
        .find((line) => line.startsWith(`| \`${name}\` |`));
      const cells = row?.split("|").map((c) => c.trim()) ?? [];
      expect(cells[3]).toBe(design.fields.map((f) => `${f.name} ${f.bits}`).join(", "));
      const readOnly = design.fields.filter((f) => f.readOnly === true).map((f) => f.name);
      expect(cells[4]).toBe(readOnly.length === 0 ? "—" : readOnly.join(", "));
      const session = design.fields.filter((f) => f.session === true).map((f) => f.name);
      expect(cells[5]).toBe(session.length === 0 ? "—" : session.join(", "));
    },
  );

  test("the schema excerpt is the schema's link", () => {
    const excerpt = blocks("json").find((b) => b.startsWith('"link": {'));
    const defs = loadSchema()["$defs"] as Record<string, unknown>;
    expect(JSON.parse(`{${excerpt ?? ""}}`)).toEqual({ link: withoutDescriptions(defs["link"]) });
  });
});
