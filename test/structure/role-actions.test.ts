// Which actions a table of each role may hold is written once, in src/wasm/abi.ts's ROLE_ACTIONS; every other place
// that knows it agrees: the action codes, the data plane's write check, the P4 export's tables (read back through the
// importer, which maps P4 actions to strata's on its own) and the description's types (checked by tsc: a new
// catalogue action does not type-check until src/description/types.ts says what it carries).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import type { ActionOf } from "../../src/description/types.js";
import { devices } from "../../src/p4/device.js";
import { importAction } from "../../src/p4/import.js";
import { ACTIONS, type ActionName, ROLE_ACTIONS, TABLE_ROLES, type TableRole } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { type TableLayout, Tables } from "../../src/wasm/tables.js";
import { EXAMPLE_SPECS, EXPORTING_FIXTURES, ROOT } from "../p4/helpers/examples.js";

const held = (role: TableRole): readonly ActionName[] => ROLE_ACTIONS[role];

describe("the catalogue of actions per role", () => {
  it("gives the action codes: none, then each role's actions in role order", () => {
    expect(ACTIONS).toEqual(["none", ...TABLE_ROLES.flatMap(held)]);
    expect(new Set(ACTIONS).size).toBe(ACTIONS.length); // no action in two roles
  });

  it("is the data plane's write check: a row is written exactly when its role may hold its action", () => {
    const tables = new Tables(DataPlane.load());
    const cases = TABLE_ROLES.flatMap((role, id) => {
      const layout: TableLayout = {
        id,
        role,
        kind: "exact",
        keyLen: 8,
        capacity: ACTIONS.length + 1,
        fields: [{ name: "k", offset: 0, len: 2, kind: "exact" }],
      };
      tables.create(layout);
      // The codes of the catalogue, and one past them (a code no role holds).
      const names = [...ACTIONS, "unknown" as ActionName];
      return names.map((name, code) => ({ role, name, code, layout }));
    });
    const written = cases.map(({ role, name, code, layout }) => {
      const value = new Uint8Array(8);
      value[1] = code;
      const match = { value, mask: Uint8Array.from([0xff, 0xff, 0, 0, 0, 0, 0, 0]), priority: 0 };
      const action = name === "out" ? { name, count: 1, arg: 1, data: Uint8Array.of(1, 0) } : { name };
      const r = tables.write([{ op: "insert", table: layout, match, action }]);
      return `${role} ${name}: ${r.ok ? "ok" : r.error}`;
    });
    const expected = cases.map(
      ({ role, name }) => `${role} ${name}: ${held(role).includes(name) ? "ok" : "BadAction"}`,
    );
    expect(written).toEqual(expected);
  });

  it("is what the assembly's check reads: write.ts names no action code", () => {
    const source = readFileSync(join(ROOT, "assembly/tables/write.ts"), "utf8");
    const names = new Set<string>();
    const visit = (n: ts.Node): void => {
      if (ts.isIdentifier(n)) names.add(n.text);
      n.forEachChild(visit);
    };
    visit(ts.createSourceFile("write.ts", source, ts.ScriptTarget.Latest, true));
    expect([...names].filter((n) => /^ACT_(?!COUNT$)/.test(n))).toEqual([]);
    expect(names.has("ROLE_ACTIONS")).toBe(true);
  });

  it("is what the P4 export's tables may name: each of their actions reads back as one of the role's", () => {
    const specs = [...EXAMPLE_SPECS, ...EXPORTING_FIXTURES];
    const reached = new Map<TableRole, Set<string>>(TABLE_ROLES.map((r) => [r, new Set()]));
    for (const spec of specs) {
      for (const d of devices(compile(loadSpec(join(ROOT, spec))))) {
        for (const t of d.tables) {
          for (const name of t.actions) {
            const params = d.actions.find((a) => a.name === name)?.params ?? [];
            const actions = new Map([[1, { name, params: params.map((_, i) => i + 1) }]]);
            const a = importAction(t, { actionId: 1, params: [] }, actions, { get: () => [1, 2] }, () => 0);
            expect(held(t.role), `${spec}: ${t.name} names ${name}`).toContain(a.name);
            reached.get(t.role)?.add(a.name);
          }
        }
      }
    }
    // The examples and fixtures between them have tables of every kind: every action of the catalogue is reached.
    for (const role of TABLE_ROLES) expect([...(reached.get(role) ?? [])].sort(), role).toEqual([...held(role)].sort());
  });

  it("types the description's actions per role", () => {
    expectTypeOf<ActionOf<"acquire">["kind"]>().toEqualTypeOf<"forward" | "receive" | "both" | "shared-acquire">();
    expectTypeOf<ActionOf<"transmit">["kind"]>().toEqualTypeOf<"physical" | "session">();
    expectTypeOf<ActionOf<"receive">["kind"]>().toEqualTypeOf<"deliver" | "link">();
  });
});
