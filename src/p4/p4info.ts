// P4Info of a device's program (p4/config/v1/p4info.proto), as the generated
// message type holds it and gRPC decodes it (src/p4runtime/messages.ts: unset
// fields absent, oneofs named): tables with their match fields and sizes, actions
// with their parameters, the action selectors of anycast, and the packet-in /
// packet-out headers. Names are fully qualified as p4c writes them ("StrataIngress.lanA_r_acquire",
// alias "lanA_r_acquire"); match fields carry the description's field names.

import type { p4 } from "../p4runtime/messages.js";
import type { MatchKind } from "../wasm/abi.js";
import type { Device, DeviceKey, DeviceTable } from "./device.js";
import { allocateIds } from "./ids.js";
import { LINK_BITS, MEMBER_BITS, qualified, SESSION_BITS } from "./names.js";

export interface P4InfoIds {
  readonly tables: ReadonlyMap<string, number>;
  readonly actions: ReadonlyMap<string, number>;
  readonly profiles: ReadonlyMap<string, number>;
  /** Each table's packet counter (direct: one count per entry), by the counter's name. */
  readonly counters: ReadonlyMap<string, number>;
  /** The packet-in and packet-out headers, by name. */
  readonly headers: ReadonlyMap<string, number>;
}

/** What P4Info's preambles say of each object (doc.brief); the program states the same with @brief, so p4c writes it
 * too. */
export const BRIEF = {
  table: (t: DeviceTable): string => `${t.role} table of ${t.member.member.qualified}`,
  selector: (t: DeviceTable): string => `anycast: one receiver per flow for ${t.member.member.qualified}`,
  counter: (t: DeviceTable): string => `packets each entry of ${t.name} matched`,
};

/** The direct counter of a table: `<table>_counter`, counting the packets each entry matched. */
export const counterName = (table: string): string => `${table}_counter`;

/** `@id(0x…)`: a P4Info id as p4c takes it in the program (the resource type in the top byte, kept as written). */
export function idAnnotation(id: number | undefined): string {
  if (id === undefined) throw new Error("an object without a P4Info id");
  return `@id(0x${id.toString(16).padStart(8, "0")})`;
}

/** A P4 string literal. */
export const quoted = (s: string): string => JSON.stringify(s);

const MATCH_TYPE: Record<MatchKind, p4.config.v1.MatchField.MatchType> = {
  exact: "EXACT",
  lpm: "LPM",
  ternary: "TERNARY",
  range: "RANGE",
  optional: "OPTIONAL",
};

export const PACKET_IN = {
  name: "packet_in",
  metadata: [
    { name: "member", bits: MEMBER_BITS },
    { name: "in_link", bits: LINK_BITS },
  ],
};
export const PACKET_OUT = {
  name: "packet_out",
  metadata: [
    { name: "member", bits: MEMBER_BITS },
    { name: "kind", bits: 8 },
    { name: "session", bits: SESSION_BITS },
  ],
};

/**
 * The size p4c states for a table whose program states none: a keyless table (it holds no
 * entries, only its default action; a `size` on it draws a warning from p4c).
 */
export const P4_DEFAULT_TABLE_SIZE = 1024;

export function p4infoIds(dev: Device): P4InfoIds {
  const taken = new Set<number>();
  return {
    tables: allocateIds(
      "table",
      dev.tables.map((t) => qualified(t.name)),
      taken,
    ),
    actions: allocateIds(
      "action",
      dev.actions.map((a) => qualified(a.name)),
      taken,
    ),
    profiles: allocateIds(
      "actionProfile",
      dev.tables.flatMap((t) => (t.selector !== undefined ? [qualified(t.selector.name)] : [])),
      taken,
    ),
    counters: allocateIds(
      "directCounter",
      dev.tables.map((t) => qualified(counterName(t.name))),
      taken,
    ),
    headers: allocateIds("controllerHeader", [PACKET_IN.name, PACKET_OUT.name]),
  };
}

export const idOf = (ids: ReadonlyMap<string, number>, name: string): number => {
  const id = ids.get(qualified(name));
  if (id === undefined) throw new Error(`no id for ${name}`);
  return id;
};

/** A table's `i`th key (from 0) as its match field: id i + 1. */
const matchField = (k: DeviceKey, i: number): p4.config.v1.MatchField => ({
  id: i + 1,
  name: k.name,
  bitwidth: k.bits,
  match: "matchType",
  matchType: MATCH_TYPE[k.kind],
});

export function p4info(dev: Device, ids: P4InfoIds): p4.config.v1.P4Info {
  const preamble = (id: number, name: string, brief?: string): p4.config.v1.Preamble => ({
    id,
    name: qualified(name),
    alias: name,
    ...(brief !== undefined ? { doc: { brief } } : {}),
  });
  const headers = [PACKET_IN, PACKET_OUT];
  const actionProfiles = dev.tables.flatMap((t): p4.config.v1.ActionProfile[] =>
    t.selector === undefined
      ? []
      : [
          {
            preamble: preamble(idOf(ids.profiles, t.selector.name), t.selector.name, BRIEF.selector(t)),
            tableIds: [idOf(ids.tables, t.name)],
            withSelector: true,
            size: String(t.selector.size),
            maxGroupSize: t.selector.maxGroupSize,
          },
        ],
  );
  // Unset fields are absent, empty lists too: the message is as gRPC decodes it (test/p4/messages.test.ts).
  return {
    pkgInfo: {
      name: `strata-${dev.machine}`,
      version: "1",
      doc: {
        brief: `strata: the members of machine ${dev.machine}`,
        description: dev.members
          .map((m) => `${m.number} ${m.ident}: ${m.member.qualified} (${m.design.name})`)
          .join("\n"),
      },
      arch: "v1model",
    },
    tables: dev.tables.map((t) => ({
      preamble: preamble(idOf(ids.tables, t.name), t.name, BRIEF.table(t)),
      ...(t.keyless ? {} : { matchFields: t.keys.map(matchField) }),
      actionRefs: [
        ...t.actions.map((a) => ({ id: idOf(ids.actions, a) })),
        { id: idOf(ids.actions, t.miss), annotations: ["@defaultonly"], scope: "DEFAULT_ONLY" },
      ],
      // A keyless table's row is its default action, set at run time; the others miss into a drop.
      ...(t.keyless ? {} : { constDefaultActionId: idOf(ids.actions, t.miss) }),
      // The program's default_action (P4Runtime 1.4): the miss, until a keyless table's entry replaces it.
      initialDefaultAction: { actionId: idOf(ids.actions, t.miss) },
      ...(t.selector !== undefined ? { implementationId: idOf(ids.profiles, t.selector.name) } : {}),
      directResourceIds: [idOf(ids.counters, counterName(t.name))],
      size: String(t.keyless ? P4_DEFAULT_TABLE_SIZE : t.table.capacity),
    })),
    actions: dev.actions.map((a) => ({
      preamble: preamble(idOf(ids.actions, a.name), a.name),
      ...(a.params.length > 0
        ? { params: a.params.map((p, i) => ({ id: i + 1, name: p.name, bitwidth: p.bits })) }
        : {}),
    })),
    ...(actionProfiles.length > 0 ? { actionProfiles } : {}),
    directCounters: dev.tables.map((t) => ({
      preamble: preamble(idOf(ids.counters, counterName(t.name)), counterName(t.name), BRIEF.counter(t)),
      spec: { unit: "PACKETS" },
      directTableId: idOf(ids.tables, t.name),
    })),
    controllerPacketMetadata: headers.map((h) => ({
      preamble: {
        id: ids.headers.get(h.name) ?? 0,
        name: h.name,
        alias: h.name,
        annotations: [`@controller_header("${h.name}")`],
      },
      metadata: h.metadata.map((m, i) => ({ id: i + 1, name: m.name, bitwidth: m.bits })),
    })),
  };
}
