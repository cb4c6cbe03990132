// P4Info of a device's program (p4/config/v1/p4info.proto), in the protobuf
// JSON mapping: tables with their match fields and sizes, actions with their
// parameters, the action selectors of anycast, and the packet-in / packet-out
// headers. Names are fully qualified as p4c writes them ("StrataIngress.lanA_r_acquire",
// alias "lanA_r_acquire"); match fields carry the description's field names.

import type { MatchKind } from "../wasm/abi.js";
import type { Device, DeviceTable } from "./device.js";
import { allocateIds } from "./ids.js";
import { LINK_BITS, MEMBER_BITS, qualified, SESSION_BITS } from "./names.js";
import type { JsonMessage } from "./schema.js";

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

const MATCH_TYPE: Record<MatchKind, string> = {
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

export function p4info(dev: Device, ids: P4InfoIds): JsonMessage {
  const preamble = (id: number, name: string, brief?: string): JsonMessage => ({
    id,
    name: qualified(name),
    alias: name,
    ...(brief !== undefined ? { doc: { brief } } : {}),
  });
  const headers = [PACKET_IN, PACKET_OUT];
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
      matchFields: t.keys.map((k, i) => ({ id: i + 1, name: k.name, bitwidth: k.bits, matchType: MATCH_TYPE[k.kind] })),
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
      params: a.params.map((p, i) => ({ id: i + 1, name: p.name, bitwidth: p.bits })),
    })),
    actionProfiles: dev.tables.flatMap((t) =>
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
    ),
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
