// main.p4's ingress control (program.ts composes it with the rest): the machine's actions and
// tables, and the state machine over meta.member and meta.stage that applies them; with the
// controls it applies per design, keys from headers and headers from a push.

import type { DesignDef } from "../wire/designs.js";
import { TABLE_ROLES } from "../wasm/abi.js";
import { type Device, type DeviceMember, type DeviceTable, pushParams } from "./device.js";
import { headerNames, p4Of } from "./designs/index.js";
import { BRIEF, counterName, idAnnotation, idOf, type P4InfoIds, quoted } from "./p4info.js";
import { ACTION_NAMES as A, INGRESS, missAction, pushAction } from "./names.js";

/** The controls the ingress applies per design: keys from headers, and headers from a push for designs sent in. */
export function designControls(dev: Device): string[] {
  return [
    ...dev.designs.flatMap((x) => [...keysControl(x), ""]),
    ...pushed(dev).flatMap((x) => [...pushControl(x), ""]),
  ];
}

/** The designs a send row of the machine pushes. */
const pushed = (dev: Device): DesignDef[] =>
  dev.designs.filter((x) => dev.actions.some((a) => a.name === pushAction(x.name)));

/** The ingress: a state machine over meta.member and meta.stage, each stage one table of the member's. */
export function ingress(dev: Device, ids: P4InfoIds): string[] {
  return [
    `control ${INGRESS}(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {`,
    ...dev.designs.map((x) => `    ${pascal(x.name)}Keys() ${x.name}_keys;`),
    ...pushed(dev).map((x) => `    ${pascal(x.name)}Push() ${x.name}_push;`),
    "",
    "    // Ends the pass: the packet is recirculated for another member of this machine.",
    "    @hidden action hand_off() {",
    "        meta.recirculate = 1;",
    "        standard_metadata.egress_spec = RECIRC_PORT;",
    "    }",
    "    @hidden action drop_packet(bit<8> reason) {",
    "        meta.drop_reason = reason;",
    "        meta.stage = STAGE_DONE;",
    "        mark_to_drop(standard_metadata);",
    "    }",
    "",
    ...actionDefinitions(dev, ids).map((l) => (l === "" ? "" : `    ${l}`)),
    "",
    ...dev.tables.flatMap((t) => [...tableDeclaration(t, ids).map((l) => `    ${l}`), ""]),
    "    apply {",
    "        meta.pass_len = standard_metadata.packet_length;",
    "        if (meta.stage == STAGE_NONE) {",
    "            if (hdr.packet_out.isValid()) {",
    "                meta.member = hdr.packet_out.member;",
    "                if (hdr.packet_out.kind == KIND_SESSION) {",
    "                    meta.stage = STAGE_SEND;",
    "                    meta.session = hdr.packet_out.session;",
    "                } else if (hdr.packet_out.kind == KIND_SELF) {",
    "                    meta.stage = STAGE_FORWARD;",
    "                    meta.in_link = IN_SELF;",
    "                } else {",
    "                    drop_packet(DROP_BAD_HEADER);  // a kind strata does not send",
    "                }",
    "                hdr.packet_out.setInvalid();",
    "                meta.packet_out_len = PACKET_OUT_LEN;",
    ...portDispatch(dev).map((l) => `            ${l}`),
    "        }",
    "        meta.passes = meta.passes + 1;",
    "        if (meta.stage == STAGE_DONE) {",
    "            // dropped above",
    "        } else if (meta.passes > MAX_PASSES) {",
    "            drop_packet(DROP_LOOP);",
    "        } else if (standard_metadata.parser_error != error.NoError) {",
    "            drop_packet(DROP_BAD_HEADER);",
    "        }",
    ...memberBlocks(dev).map((l) => `        ${l}`),
    "    }",
    "}",
    "",
  ];
}

const pascal = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** The member numbered `number` on the machine. */
export function memberOf(dev: Device, number: number): DeviceMember {
  const m = dev.members.find((x) => x.number === number);
  if (m === undefined) throw new Error(`no member ${number} on ${dev.machine}`);
  return m;
}

/** A control filling a design's key struct from the parsed headers (absent tags and ports read as 0). */
function keysControl(design: DesignDef): string[] {
  const head = [`control ${pascal(design.name)}Keys(in headers_t hdr, out ${design.name}_key_t k) {`, "    apply {"];
  return [...head, ...p4Of(design).keys.map((l) => `        ${l}`), "    }", "}"];
}

/** A control putting a design's header in front of the payload from a send row's fields (lengths from the payload). */
function pushControl(design: DesignDef): string[] {
  const name = `${pascal(design.name)}Push`;
  const head = [
    `control ${name}(inout headers_t hdr, in ${design.name}_key_t k, in bit<32> payload_len, out bit<32> header_len) {`,
    "    apply {",
  ];
  // What it put in front: the design's headers now valid (a pass that pushes parses none).
  const length = [
    "header_len = 0;",
    ...headerNames(design).map(
      (h) => `if (hdr.${h}.isValid()) { header_len = header_len + (bit<32>) hdr.${h}.minSizeInBytes(); }`,
    ),
  ];
  return [...head, ...[...p4Of(design).push, ...length].map((l) => `        ${l}`), "    }", "}"];
}

/** Every action of the machine, each with its P4Info id: a role's, a miss, or a push of a design sent in. */
function actionDefinitions(dev: Device, ids: P4InfoIds): string[] {
  const roleBodies = roleActionBodies(dev);
  return dev.actions.flatMap((a) => {
    const params = a.params.map((p) => `bit<${p.bits}> ${p.name}`).join(", ");
    const design = dev.designs.find((x) => pushAction(x.name) === a.name);
    const statements = design !== undefined ? pushActionBody(design) : (roleBodies[a.name] ?? []);
    return [
      `${idAnnotation(idOf(ids.actions, a.name))} action ${a.name}(${params}) {`,
      ...statements.map((s) => `    ${s}`),
      "}",
    ];
  });
}

/** A send row: the session's header, every writable field (src/wire/designs.ts), written into the design's keys. */
function pushActionBody(design: DesignDef): string[] {
  return [
    "// a send row: the session's header, every writable field (src/wire/designs.ts)",
    ...pushParams(design).map((p) => `meta.${design.name}.${p.name} = ${p.name};`),
    "meta.pushed = 1;",
    "meta.in_link = IN_SELF;",
    "meta.stage = STAGE_FORWARD;",
  ];
}

/** What each role's actions and each table's miss do, by action name. */
function roleActionBodies(dev: Device): Record<string, string[]> {
  const popped = [...new Set(dev.designs.flatMap(headerNames))];
  const body: Record<string, string[]> = {
    [A.acquireForward]: ["meta.stage = STAGE_FORWARD;"],
    [A.acquireReceive]: ["meta.stage = STAGE_RECEIVE;"],
    [A.acquireBoth]: [
      "// forward this packet; a clone comes back (egress) for the receive table",
      "meta.stage = STAGE_FORWARD;",
      "meta.both_member = meta.member;",
      "meta.both_in_link = meta.in_link;",
      "clone_preserving_field_list(CloneType.I2E, CLONE_SESSION_BOTH, 2);",
    ],
    [A.acquireShared]: [
      "// SharedAcquire: the shared member of the other network acquires it, unchanged",
      "meta.member = member;",
      "meta.stage = STAGE_ACQUIRE;",
      "hand_off();",
    ],
    [A.forwardOut]: ["meta.out_link = out_link;", "meta.forwarded = 1;", "meta.stage = STAGE_TRANSMIT;"],
    [A.forwardReplicate]: [
      "// one replica per out-link (PRE multicast group; egress_rid = out-link)",
      "standard_metadata.mcast_grp = group;",
      "meta.replicated = 1;",
      "meta.forwarded = 1;",
      "meta.stage = STAGE_DONE;",
    ],
    [A.forwardDrop]: ["drop_packet(DROP_FORWARD_DROP);"],
    [A.forwardShared]: [
      "// SharedForward: the shared member of the other network forwards it, in-link shared",
      "meta.member = member;",
      "meta.in_link = IN_SHARED;",
      "meta.stage = STAGE_FORWARD;",
      "hand_off();",
    ],
    [A.transmitPhysical]: ["standard_metadata.egress_spec = port;", "meta.stage = STAGE_DONE;"],
    [A.transmitLocal]: [
      "// a link to another member of this machine",
      "meta.member = member;",
      "meta.in_link = in_link;",
      "meta.stage = STAGE_ACQUIRE;",
      "hand_off();",
    ],
    [A.transmitSession]: [
      "// ExternalSession: the underlay member pushes its header in its send table",
      "meta.member = member;",
      "meta.session = session;",
      "meta.stage = STAGE_SEND;",
      "hand_off();",
    ],
    [A.transmitNoLink]: ["drop_packet(DROP_NO_LINK);"],
    [A.receiveDeliver]: ["standard_metadata.egress_spec = CPU_PORT;", "meta.stage = STAGE_DONE;"],
    [A.receivePop]: [
      "// ExternalLink: this network's header comes off; the overlay member acquires the rest on in_link",
      ...popped.map((h) => `hdr.${h}.setInvalid();`),
      "meta.member = member;",
      "meta.in_link = in_link;",
      "meta.stage = STAGE_ACQUIRE;",
      "meta.popped = 1;",
      "hand_off();",
    ],
  };
  for (const role of TABLE_ROLES) body[missAction(role)] = [`drop_packet(DROP_${role.toUpperCase()}_MISS);`];
  return body;
}

function tableDeclaration(t: DeviceTable, ids: P4InfoIds): string[] {
  const keys = t.keys.map((k) => `${k.expr}: ${k.kind} @name("${k.name}");`);
  if (t.selector !== undefined)
    keys.push(...t.selector.flowKeys.map((k) => `${k}: selector;  // the flow fields: one flow, one receiver`));
  return [
    `// ${t.role} of ${t.member.member.qualified}` +
      (t.table.spec !== undefined
        ? ` (the description's line ${t.table.spec.at.line})`
        : " (the compiler's default rows)"),
    ...(t.keyless ? ["// It matches no field: its row is the default action, set by the controller."] : []),
    "// P4Runtime: the entry's counter_data",
    `${idAnnotation(idOf(ids.counters, counterName(t.name)))} @brief(${quoted(BRIEF.counter(t))})`,
    `direct_counter(CounterType.packets) ${counterName(t.name)};`,
    // A named instance: p4c would name an anonymous one action_profile_0, which no controller knows.
    ...(t.selector !== undefined
      ? [
          `${idAnnotation(idOf(ids.profiles, t.selector.name))} @brief(${quoted(BRIEF.selector(t))}) ` +
            `@max_group_size(${t.selector.maxGroupSize})`,
          `action_selector(HashAlgorithm.crc16, ${t.selector.size}, 16) ${t.selector.name};`,
        ]
      : []),
    `${idAnnotation(idOf(ids.tables, t.name))} @brief(${quoted(BRIEF.table(t))})`,
    `table ${t.name} {`,
    ...(t.keyless ? [] : ["    key = {", ...keys.map((k) => `        ${k}`), "    }"]),
    "    actions = {",
    ...t.actions.map((a) => `        ${a};`),
    `        @defaultonly ${t.miss};`,
    "    }",
    t.keyless ? `    default_action = ${t.miss}();` : `    const default_action = ${t.miss}();`,
    ...(t.selector !== undefined ? [`    implementation = ${t.selector.name};`] : []),
    `    counters = ${counterName(t.name)};`,
    // A keyless table holds no entries, only its default action: a size would mean nothing (p4c warns).
    ...(t.keyless ? [] : [`    size = ${t.table.capacity};`]),
    "}",
  ];
}

function portDispatch(dev: Device): string[] {
  const lines = dev.ingress.map((p) => {
    const m = memberOf(dev, p.member);
    return (
      `} else if (standard_metadata.ingress_port == ${p.port}) {\n    meta.member = M_${m.ident};\n` +
      `    meta.in_link = ${p.inLink};\n    meta.stage = STAGE_ACQUIRE;`
    );
  });
  return [
    ...lines.flatMap((l) => l.split("\n")),
    "} else {",
    "    drop_packet(DROP_NO_LINK);  // a port no link of this machine uses",
    "}",
  ];
}

function memberBlocks(dev: Device): string[] {
  const lines: string[] = [];
  dev.members.forEach((m, i) => {
    const table = (role: string): DeviceTable | undefined => dev.tables.find((t) => t.member === m && t.role === role);
    const stage = (s: string, role: string, after: string[] = []): string[] => {
      const t = table(role);
      const miss = `drop_packet(DROP_${role.toUpperCase()}_MISS);`;
      // bmv2 runs no default action in a table with an action profile: a miss drops here.
      const apply =
        t?.selector !== undefined ? [`if (!${t.name}.apply().hit) { ${miss} }`] : [`${t?.name ?? ""}.apply();`];
      const run = t !== undefined ? [...apply, ...after] : [`${miss}  // no ${role} table`];
      return [`if (meta.stage == STAGE_${s} && meta.recirculate == 0) {`, ...run.map((l) => `    ${l}`), "}"];
    };
    const design = m.design.name;
    const hasPush = dev.actions.some((a) => a.name === pushAction(design));
    // A forward row that reads a field from the payload (IPv4's transport ports) needs the packet
    // parsed with the pushed header in front: the push hands off, the next pass forwards.
    const fromPayload = new Set(m.design.fields.filter((f) => f.readOnly === true).map((f) => f.name));
    const reparse = table("forward")?.keys.some((k) => fromPayload.has(k.name)) === true;
    lines.push(
      `${i === 0 ? "if" : "} else if"} (meta.stage != STAGE_DONE && meta.member == M_${m.ident}) {`,
      `    // ${m.member.qualified}: ${design}${m.network.spec.decrementTtl ? ", forwarding decrements the TTL" : ""}`,
      ...[
        "if (meta.stage == STAGE_SEND) {",
        ...(table("send") !== undefined && hasPush
          ? [
              `    ${table("send")?.name ?? ""}.apply();`,
              `    if (meta.pushed == 1) { ${design}_push.apply(hdr, meta.${design}, ` +
                `meta.pass_len - meta.packet_out_len - meta.trail, meta.pushed_len);` +
                (reparse ? " hand_off(); }  // forward rows read the payload's ports: parsed in the next pass" : " }"),
            ]
          : ["    drop_packet(DROP_SEND_MISS);  // no send table"]),
        "} else {",
        `    ${design}_keys.apply(hdr, meta.${design});`,
        ...trimLines(m.design).map((l) => `    ${l}`),
        "}",
        ...stage("ACQUIRE", "acquire"),
        ...stage("FORWARD", "forward", m.network.spec.decrementTtl ? ttlLines(m.design) : []),
        ...stage("TRANSMIT", "transmit"),
        ...stage("RECEIVE", "receive"),
      ].map((l) => `    ${l}`),
    );
  });
  if (dev.members.length > 0) lines.push("}");
  return lines;
}

/**
 * After a pop: bytes past the length the design states (an Ethernet frame's padding) are not the
 * packet's, as strata cuts them (src/model/interpreter.ts #receive); meta.trail counts them.
 */
function trimLines(design: DesignDef): string[] {
  const stated = p4Of(design).statedLen;
  if (stated === undefined) return ["meta.popped = 0;"];
  return [
    `if (meta.popped == 1 && ${stated} < meta.pass_len - meta.trail) {`,
    `    meta.trail = meta.pass_len - (${stated});`,
    "}",
    "meta.popped = 0;",
  ];
}

/** Forwarding's side effect: TTL − 1 on packets the member did not send itself. */
function ttlLines(design: DesignDef): string[] {
  const decrement = p4Of(design).decrement;
  if (decrement === undefined) return [];
  return ["if (meta.forwarded == 1 && meta.in_link != IN_SELF) {", ...decrement.map((l) => `    ${l}`), "}"];
}
