// main.p4 read as text (compile.test.ts compiles it with p4c where the toolchain
// is): for every machine of every example, the program's own references resolve —
// braces balance, every table, control instance, action, header instance, state
// and constant it uses is declared, no identifier is a P4 keyword — and each
// table's key, actions and size are those P4Info states (a keyless table states
// no size: it holds no entries).

import { describe, expect, it } from "vitest";
import { EXAMPLE_SPECS, exportFiles, exportSpec } from "./helpers/examples.js";

const SPECS = [...EXAMPLE_SPECS, "test/fixtures/specs/p4-features.yaml", "test/fixtures/specs/p4-designs.yaml"];
const KEYWORDS = ["key", "type", "in", "out", "table", "action", "state", "default", "priority", "entries"];

const all = (text: string, re: RegExp): string[] => [...text.matchAll(re)].map((m) => m[1] ?? "");

describe.each(SPECS)("main.p4 of %s", (spec) => {
  it.each(exportSpec(spec).map((ex) => [ex.manifest.machine, ex] as const))(
    "machine %s: every name it uses is declared",
    (_, ex) => {
      const p4 = ex.files["main.p4"] as string;
      const code = p4.replace(/\/\/.*$/gm, "").replace(/"[^"]*"/g, '""');
      expect(code.split("{").length).toBe(code.split("}").length);
      expect(code.split("(").length).toBe(code.split(")").length);

      const tables = new Set(all(code, /\btable (\w+) \{/g));
      const instances = new Set(all(code, /^\s*\w+\(\) (\w+);$/gm));
      for (const applied of all(code, /\b(\w+)\.apply\(/g))
        expect(tables.has(applied) || instances.has(applied), `${applied}.apply()`).toBe(true);

      const actions = new Set(all(code, /\baction (\w+)\(/g));
      for (const block of all(code, /actions = \{([^}]*)\}/g)) {
        for (const a of block
          .split(";")
          .map((s) => s.replace("@defaultonly", "").trim())
          .filter((s) => s !== ""))
          expect(actions.has(a), `action ${a}`).toBe(true);
      }
      for (const d of all(code, /default_action = (\w+)\(\)/g)) expect(actions.has(d), `default ${d}`).toBe(true);

      const instancesOfHeaders = new Set(
        all(
          code.slice(code.indexOf("struct headers_t"), code.indexOf("}", code.indexOf("struct headers_t"))),
          /\w+ (\w+);/g,
        ),
      );
      for (const h of all(code, /\bhdr\.(\w+)/g)) expect(instancesOfHeaders.has(h), `hdr.${h}`).toBe(true);

      const states = new Set(all(code, /\bstate (\w+)/g));
      for (const s of all(code, /(?:transition|:)\s*(parse_\w+|from_port|by_member)\b/g))
        expect(states.has(s), `state ${s}`).toBe(true);

      const consts = new Set(all(code, /\bconst [\w<>]+ (\w+) =/g));
      for (const c of all(
        code,
        /\b((?:STAGE|DROP|M|KIND|IN)_\w+|CPU_PORT|RECIRC_PORT|MAX_PASSES|CLONE_SESSION_BOTH|INSTANCE_\w+)\b/g,
      ))
        expect(consts.has(c), `const ${c}`).toBe(true);

      for (const id of all(code, /\bbit<\d+> (\w+)[;,)=]/g)) expect(KEYWORDS, `identifier ${id}`).not.toContain(id);
    },
  );

  it.each(exportSpec(spec).map((ex) => [ex.manifest.machine, ex] as const))(
    "machine %s: tables are what P4Info says",
    (_, ex) => {
      const p4 = ex.files["main.p4"] as string;
      const info = exportFiles(ex).p4info as {
        tables?: {
          preamble: { alias: string };
          matchFields?: { name: string; matchType: string }[];
          size: string;
          actionRefs: { id: number }[];
        }[];
      };
      for (const t of info.tables ?? []) {
        const body = p4.slice(p4.indexOf(`table ${t.preamble.alias} {`));
        const decl = body.slice(0, body.indexOf("\n    }\n") + 1);
        const keys = all(decl, /: (\w+) @name\("(?:\w+)"\)/g);
        expect(keys).toEqual((t.matchFields ?? []).map((f) => f.matchType.toLowerCase()));
        expect(all(decl, /@name\("(\w+)"\)/g)).toEqual((t.matchFields ?? []).map((f) => f.name));
        expect(all(decl, /size = (\d+);/g)).toEqual(t.matchFields === undefined ? [] : [t.size]);
        expect(
          all(decl.slice(decl.indexOf("actions = {")), /^\s+(?:@defaultonly )?(\w+);$/gm).slice(0, t.actionRefs.length)
            .length,
        ).toBe(t.actionRefs.length);
      }
    },
  );
});
