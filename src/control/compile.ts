// From a validated description to tables and topology (CompiledSpec): the networks' members and one-way links, and
// each member's tables (how a header table's rows become entries, and its kind is chosen: header-table.ts).

import { SpecError, type SpecIssue } from "../description/problems.js";
import type { Endpoint, LinkSpec, RowSpec, SourceRef, Spec, TableSpec } from "../description/types.js";
import type { EntryAction, KeyField } from "../wasm/tables.js";
import { type KeyLayout, keyLayout } from "../wire/designs.js";
import { formatValue } from "../description/notation.js";
import { Composition } from "./composition.js";
import {
  capacityOf,
  type CompiledLink,
  type CompiledMember,
  type CompiledNetwork,
  type CompiledRow,
  type CompiledSpec,
  type CompiledTable,
  type Receiver,
  type SharedOutLink,
} from "./compiled.js";
import { type Attachment, compileHeaderTable, putBig } from "./header-table.js";

export function compile(spec: Spec): CompiledSpec {
  const problems: SpecIssue[] = [];
  const networks: CompiledNetwork[] = spec.networks.map((n, index) => ({
    index,
    name: n.name,
    spec: n,
    layout: keyLayout(n.design),
  }));
  const { members, machines } = compileMembers(networks);
  const across = new Composition(networks, members);
  const { links, sharedOutLinks, outLinks } = compileLinks(networks, across);
  const tables: CompiledTable[] = [];
  for (const m of members) {
    const net = networks[m.network];
    if (net !== undefined)
      tables.push(...memberTables(m, net, outLinks.get(m.index) ?? [], tables.length, across, problems));
  }
  if (problems.length > 0) throw new SpecError(problems);
  let maxFanout = Math.max(1, ...links.map((l) => l.receivers.length));
  for (const t of tables) for (const r of t.rows) maxFanout = Math.max(maxFanout, r.outLinks.length);
  return { spec, networks, members, links, tables, machines, sharedOutLinks, maxFanout: maxFanout + 1 };
}

/** Every network's members, in order, and the machines they are on, numbered as first named. */
function compileMembers(networks: readonly CompiledNetwork[]): { members: CompiledMember[]; machines: string[] } {
  const machines: string[] = [];
  const machineIndexes = new Map<string, number>();
  const machineIndex = (name: string): number => {
    let i = machineIndexes.get(name);
    if (i === undefined) {
      i = machines.push(name) - 1;
      machineIndexes.set(name, i);
    }
    return i;
  };
  const members: CompiledMember[] = [];
  for (const net of networks) {
    for (const m of net.spec.members) {
      members.push({
        index: members.length,
        network: net.index,
        key: m.key,
        qualified: `${net.name}.${m.key}`,
        machine: machineIndex(m.machine),
        nOutLinks: 0,
        tables: {},
        spec: m,
      });
    }
  }
  return { members, machines };
}

/** Every network's one-way links, the out-links of the overlays' shared members, and the identifiers each member
 * sends on (its out-links, by member). */
function compileLinks(
  networks: readonly CompiledNetwork[],
  across: Composition,
): { links: CompiledLink[]; sharedOutLinks: SharedOutLink[]; outLinks: Map<number, number[]> } {
  const outLinks = new Map<number, number[]>();
  const addOutLink = (member: number, outLink: number): void => {
    const idents = outLinks.get(member);
    if (idents === undefined) outLinks.set(member, [outLink]);
    else idents.push(outLink);
  };
  const sharedOutLinks: SharedOutLink[] = [];
  const links: CompiledLink[] = [];
  for (const net of networks) {
    for (const l of net.spec.links) {
      const shared = across.shared(net, l);
      for (const dir of directions(l)) {
        const sender = dir.from === undefined ? -1 : across.member(net, dir.from);
        const senderOutLink = dir.from?.ident ?? 0;
        if (sender >= 0) addOutLink(sender, senderOutLink);
        // The overlay's shared member sends on the link with the same identifier.
        if (shared !== undefined && sender === shared.here) {
          addOutLink(shared.there, senderOutLink);
          sharedOutLinks.push({ member: shared.there, outLink: senderOutLink, link: links.length });
        }
        const receivers: Receiver[] = dir.to.map((e) => ({ member: across.member(net, e), inLink: e.ident }));
        links.push({
          index: links.length,
          network: net.index,
          name: l.name,
          qualified: `${net.name}.${l.name}`,
          recorded: l.record,
          sender,
          senderOutLink,
          mode: l.mode,
          receivers,
          ...(dir.external !== undefined ? { external: dir.external } : {}),
          spec: l,
        });
      }
    }
  }
  return { links, sharedOutLinks, outLinks };
}

/** The one-way links a declared link stands for. */
function directions(l: LinkSpec): { from?: Endpoint; to: Endpoint[]; external?: string }[] {
  const fromExt = "external" in l.from ? l.from.external : undefined;
  const toExt = !Array.isArray(l.to) && "external" in l.to ? (l.to as { external: string }).external : undefined;
  const from = "external" in l.from ? undefined : l.from;
  const to = Array.isArray(l.to) ? (l.to as Endpoint[]) : [];
  const external = fromExt ?? toExt;
  const forward = { ...(from !== undefined ? { from } : {}), to, ...(external !== undefined ? { external } : {}) };
  if (l.mode !== "two-way") return [forward];
  // The reverse: receivers become the sender, and the sender the receiver, with the same identifiers.
  const back = to[0];
  const reverse = {
    ...(back !== undefined ? { from: back } : {}),
    to: from !== undefined ? [from] : [],
    ...(external !== undefined ? { external } : {}),
  };
  return [forward, reverse];
}

/** A member's tables, numbered from `first` in the order acquire, forward, receive, transmit, send, each also set in
 * the member's own record with the count of its out-links (`sends`, the identifiers it sends on). */
function memberTables(
  m: CompiledMember,
  net: CompiledNetwork,
  sends: readonly number[],
  first: number,
  across: Composition,
  problems: SpecIssue[],
): CompiledTable[] {
  const own = net.spec.tables.get(m.key) ?? {};
  const mut = m as { nOutLinks: number; tables: CompiledMember["tables"] };
  mut.nOutLinks = sends.length === 0 ? 0 : Math.max(...sends) + 1;
  const attachment: Attachment = (network, from) => across.attachment(network, from);
  const tables: CompiledTable[] = [];
  for (const role of ["acquire", "forward", "receive"] as const) {
    const t = own[role];
    if (t === undefined) continue;
    const compiled = compileHeaderTable(
      first + tables.length,
      m.index,
      net,
      t,
      attachment,
      () => across.partner(m.index),
      problems,
    );
    mut.tables[role] = compiled;
    tables.push(compiled);
  }
  const outLinks = [...new Set(sends)].sort((a, b) => a - b);
  const transmit = compileTransmit(first + tables.length, m.index, own.transmit, outLinks, attachment);
  mut.tables.transmit = transmit;
  tables.push(transmit);
  if (own.send !== undefined) {
    const send = compileSend(first + tables.length, m.index, net.layout, own.send);
    mut.tables.send = send;
    tables.push(send);
  }
  return tables;
}

// ── transmit and send: keyed by an identifier ─────────────────────────────

const ONE_FIELD_KEY_LEN = 8;

function compileTransmit(
  id: number,
  memberIndex: number,
  t: TableSpec | undefined,
  outLinks: readonly number[],
  attachment: Attachment,
): CompiledTable {
  const field: KeyField = { name: "out", offset: 0, len: 2, kind: "exact" };
  const transmitRow = (r: RowSpec, i: number): CompiledRow => {
    const out = r.out ?? 0;
    const a = r.action;
    if (a.kind !== "session") return identRow(i, out, 2, { name: "physical" }, r.at, `out ${out} → physical`);
    // ExternalSession: arg is the underlay member on this machine, arg2 the session.
    const action: EntryAction = { name: "external-session", arg: attachment(a.network, memberIndex), arg2: a.session };
    return identRow(i, out, 2, action, r.at, `out ${out} → session ${a.network}.${a.session}`);
  };
  // No transmit table written: every out-link is physical (the description's default).
  const rows: CompiledRow[] =
    t === undefined
      ? outLinks.map((p) => identRow(-1, p, 2, { name: "physical" }, null, `out ${p} → physical (default)`))
      : t.rows.map(transmitRow);
  const capacity = capacityOf(t, rows.length);
  return {
    id,
    role: "transmit",
    kind: "exact",
    keyLen: ONE_FIELD_KEY_LEN,
    capacity,
    fields: [field],
    member: memberIndex,
    rows,
    ...(t !== undefined ? { spec: t } : {}),
  };
}

function compileSend(id: number, memberIndex: number, layout: KeyLayout, t: TableSpec): CompiledTable {
  const field: KeyField = { name: "session", offset: 0, len: 4, kind: "exact" };
  const rows = t.rows.map((r, i) => {
    if (r.action.kind !== "push") throw new Error("a send row's action is push");
    // The header's fields, encoded as a key vector of the design: wasm emits the header from it.
    const vector = new Uint8Array(layout.len);
    const parts: string[] = [];
    for (const slot of layout.slots.slice(1)) {
      const v = r.action.header.get(slot.field.name);
      if (v === undefined) continue;
      putBig(vector, slot, v);
      parts.push(`${slot.field.name} ${formatValue(v, slot.field.kind)}`);
    }
    // arg: the design, so that the data plane makes the header's template when it installs the row.
    const action: EntryAction = { name: "push", count: vector.length, arg: layout.design.id, data: vector };
    return identRow(i, r.session ?? 0, 4, action, r.at, `session ${r.session ?? 0} → push ${parts.join(", ")}`);
  });
  const capacity = capacityOf(t, rows.length);
  return {
    id,
    role: "send",
    kind: "exact",
    keyLen: ONE_FIELD_KEY_LEN,
    capacity,
    fields: [field],
    member: memberIndex,
    rows,
    spec: t,
  };
}

function identRow(
  row: number,
  ident: number,
  len: number,
  action: EntryAction,
  at: SourceRef | null,
  text: string,
): CompiledRow {
  const value = new Uint8Array(ONE_FIELD_KEY_LEN);
  const mask = new Uint8Array(ONE_FIELD_KEY_LEN);
  putBig(value, { offset: 0, len }, BigInt(ident));
  mask.fill(0xff, 0, len);
  return { row, match: { value, mask, priority: 0 }, action, outLinks: [], at, text };
}
