// From a validated description to tables and topology (CompiledSpec).
//
// A pattern table denotes the model's relation: a header is related to the
// action of the first row, in the order written, that matches it. Match kinds
// are chosen per field, as a P4 compiler would from the patterns the rows use,
// and the table's kind follows: a range anywhere → range; a mask → ternary; one
// prefix field with the rest exact → LPM; a field some rows leave out →
// optional; else exact. The kind never changes which row wins: LPM is chosen
// only when the longest prefix is also the first match; otherwise the rows go
// into a ternary table by their order. A table written `kind: lpm` asks for
// longest-prefix semantics instead, whatever the order.

import { SpecError, SpecIssue } from "../description/problems.js";
import type { Endpoint, InLink, LinkSpec, Pattern, RowSpec, SourceRef, Spec, TableSpec } from "../description/types.js";
import { type MatchKind, LINK_SELF, LINK_SHARED } from "../wasm/abi.js";
import type { EntryAction, EntryMatch, KeyField } from "../wasm/tables.js";
import { type FieldSlot, type KeyLayout, keyLayout } from "../wire/designs.js";
import { formatValue } from "../description/notation.js";
import { Composition } from "./composition.js";
import type {
  CompiledLink,
  CompiledMember,
  CompiledNetwork,
  CompiledRow,
  CompiledSpec,
  CompiledTable,
  Receiver,
  SharedOutLink,
} from "./compiled.js";

export const DEFAULT_CAPACITY = 1024;

export function compile(spec: Spec): CompiledSpec {
  const problems: SpecIssue[] = [];
  const networks: CompiledNetwork[] = spec.networks.map((n, index) => ({
    index,
    name: n.name,
    spec: n,
    layout: keyLayout(n.design),
  }));
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

  // Members, and the identifiers each sends on (its out-links).
  const members: CompiledMember[] = [];
  const outLinks = new Map<number, number[]>();
  const addOutLink = (member: number, outLink: number): void => {
    const idents = outLinks.get(member);
    if (idents === undefined) outLinks.set(member, [outLink]);
    else idents.push(outLink);
  };
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
  const across = new Composition(networks, members);
  const attachment: Attachment = (network, from) => across.attachment(network, from);

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

  let nextTable = 0;
  const tables: CompiledTable[] = [];
  let maxFanout = Math.max(1, ...links.map((l) => l.receivers.length));
  for (const m of members) {
    const net = networks[m.network];
    if (net === undefined) continue;
    const idents = outLinks.get(m.index) ?? [];
    const own = net.spec.tables.get(m.key) ?? {};
    const mut = m as { nOutLinks: number; tables: CompiledMember["tables"] };
    mut.nOutLinks = idents.length === 0 ? 0 : Math.max(...idents) + 1;
    for (const role of ["acquire", "forward", "receive"] as const) {
      const t = own[role];
      if (t === undefined) continue;
      const compiled = compileHeaderTable(
        nextTable++,
        m.index,
        net,
        t,
        attachment,
        () => across.partner(m.index),
        problems,
      );
      mut.tables[role] = compiled;
      tables.push(compiled);
      for (const r of compiled.rows) maxFanout = Math.max(maxFanout, r.outLinks.length);
    }
    const transmit = compileTransmit(
      nextTable++,
      m.index,
      own.transmit,
      [...new Set(idents)].sort((a, b) => a - b),
      attachment,
    );
    mut.tables.transmit = transmit;
    tables.push(transmit);
    if (own.send !== undefined) {
      const send = compileSend(nextTable++, m.index, net.layout, own.send);
      mut.tables.send = send;
      tables.push(send);
    }
  }
  if (problems.length > 0) throw new SpecError(problems);
  return { spec, networks, members, links, tables, machines, sharedOutLinks, maxFanout: maxFanout + 1 };
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

// ── Header tables: acquire, forward, receive ──────────────────────────────

type PatternKind = Pattern["kind"];

const GENERALITY: Record<MatchKind, number> = { exact: 0, lpm: 1, optional: 1, ternary: 2, range: 3 };

function fieldKind(kinds: ReadonlySet<PatternKind>, omitted: boolean): MatchKind {
  if (kinds.has("range")) return "range";
  if (kinds.has("ternary")) return "ternary";
  if (kinds.has("prefix")) return "lpm"; // a row without it matches the /0 prefix
  return omitted ? "optional" : "exact";
}

function tableKind(fields: readonly MatchKind[]): MatchKind {
  if (fields.includes("range")) return "range";
  if (fields.includes("ternary")) return "ternary";
  const lpm = fields.filter((k) => k === "lpm").length;
  if (lpm === 1 && !fields.includes("optional")) return "lpm";
  if (lpm > 0) return "ternary";
  return fields.includes("optional") ? "optional" : "exact";
}

/** Field kinds as a table of `kind` holds them: prefixes become masks outside LPM tables. */
function settle(kind: MatchKind, field: MatchKind): MatchKind {
  if (field === "lpm" && kind !== "lpm") return "ternary";
  return field;
}

/** The member of `network` on the machine of member `from` (layering's attachment), or −1. */
type Attachment = (network: string, from: number) => number;

function compileHeaderTable(
  id: number,
  memberIndex: number,
  net: CompiledNetwork,
  t: TableSpec,
  attachment: Attachment,
  sharedWith: () => number,
  problems: SpecIssue[],
): CompiledTable {
  const layout = net.layout;
  const used: FieldSlot[] = [];
  const fieldKinds: MatchKind[] = [];
  const inSlot = layout.slots[0];
  if (inSlot !== undefined && t.rows.some((r) => r.in !== undefined)) {
    used.push(inSlot);
    fieldKinds.push(t.rows.every((r) => r.in !== undefined) ? "exact" : "optional");
  }
  for (const slot of layout.slots.slice(1)) {
    const patterns = t.rows.map((r) => r.match.get(slot.field.name));
    if (patterns.every((p) => p === undefined)) continue;
    used.push(slot);
    const kinds = new Set(patterns.flatMap((p) => (p === undefined ? [] : [p.kind])));
    fieldKinds.push(fieldKind(kinds, patterns.includes(undefined)));
  }
  let inferred = tableKind(fieldKinds);
  if (inferred === "lpm" && t.kind === undefined && !firstMatchIsLongest(t.rows, used, fieldKinds))
    inferred = "ternary";
  let kind = inferred;
  if (t.kind !== undefined) {
    const fits =
      t.kind === inferred ||
      (GENERALITY[t.kind] > GENERALITY[inferred] && t.kind !== "lpm" && !(t.kind === "optional" && inferred === "lpm"));
    if (fits) kind = t.kind;
    else {
      problems.push(
        new SpecIssue(
          t.at,
          `kind ${t.kind} cannot hold these rows: their patterns need ${inferred}`,
          `write kind: ${inferred}, or leave kind out`,
        ),
      );
    }
  }
  const fields: KeyField[] = used.map((s, i) => ({
    name: s.field.name,
    offset: s.offset,
    len: s.len,
    kind: settle(kind, fieldKinds[i] ?? "exact"),
  }));
  const capacity = t.capacity ?? Math.max(DEFAULT_CAPACITY, t.rows.length);
  const rows = t.rows.map((r, i) =>
    headerRow(
      r,
      i,
      t.rows.length,
      kind,
      layout,
      used,
      fields,
      problems,
      (network) => attachment(network, memberIndex),
      sharedWith,
    ),
  );
  return { id, role: t.role, kind, keyLen: layout.len, capacity, fields, member: memberIndex, rows, spec: t };
}

/**
 * Whether, in these rows, the longest matching prefix is always the first
 * matching row: no earlier row with a shorter prefix covers a later, longer one
 * (with the same values in the other fields). Then an LPM table and the
 * written order agree.
 */
function firstMatchIsLongest(
  rows: readonly RowSpec[],
  used: readonly FieldSlot[],
  kinds: readonly MatchKind[],
): boolean {
  const lpmAt = kinds.indexOf("lpm");
  const slot = used[lpmAt];
  if (slot === undefined) return true;
  const bits = slot.field.bits;
  const seen = new Set<string>();
  const lengths = new Set<number>();
  for (const r of rows) {
    const rest = used
      .filter((_, i) => i !== lpmAt)
      .map((u) => (u.field.name === "in" ? String(r.in) : String(patternValue(r.match.get(u.field.name)))))
      .join("|");
    const p = r.match.get(slot.field.name);
    const len = p === undefined ? 0 : p.kind === "prefix" ? p.len : bits;
    const value = p === undefined ? 0n : patternValue(p);
    const key = (l: number): string => `${rest}|${l}|${value >> BigInt(bits - l)}`;
    for (const l of lengths) if (l < len && seen.has(key(l))) return false;
    seen.add(key(len));
    lengths.add(len);
  }
  return true;
}

function patternValue(p: Pattern | undefined): bigint {
  return p === undefined ? -1n : p.kind === "range" ? p.lo : p.value;
}

function putBig(bytes: Uint8Array, slot: { offset: number; len: number }, value: bigint): void {
  let v = value;
  for (let i = slot.len - 1; i >= 0; i--) {
    bytes[slot.offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

const ones = (bits: number): bigint => (1n << BigInt(bits)) - 1n;

function headerRow(
  r: RowSpec,
  index: number,
  n: number,
  kind: MatchKind,
  layout: KeyLayout,
  used: readonly FieldSlot[],
  fields: readonly KeyField[],
  problems: SpecIssue[],
  attached: (network: string) => number,
  sharedWith: () => number,
): CompiledRow {
  const value = new Uint8Array(layout.len);
  const mask = new Uint8Array(layout.len);
  const lo = new Uint8Array(layout.len);
  const hi = new Uint8Array(layout.len);
  const parts: string[] = [];
  used.forEach((slot, i) => {
    const f = fields[i];
    if (f === undefined) return;
    const width = slot.len * 8;
    const pad = ones(width) ^ ones(slot.field.bits); // bytes' bits above the field: always 0 in keys
    if (slot.field.name === "in") {
      if (r.in === undefined) {
        if (f.kind === "range") putBig(hi, slot, ones(16));
        return;
      }
      const v = BigInt(inValue(r.in));
      parts.push(`in ${r.in}`);
      if (f.kind === "range") {
        putBig(lo, slot, v);
        putBig(hi, slot, v);
      } else {
        putBig(value, slot, v);
        putBig(mask, slot, ones(width));
      }
      return;
    }
    const p = r.match.get(slot.field.name);
    if (p !== undefined) parts.push(`${slot.field.name} ${describePattern(p, slot)}`);
    if (f.kind === "range") {
      const bounds = asRange(p, slot.field.bits);
      if (bounds === undefined) {
        problems.push(
          new SpecIssue(
            r.at,
            `${slot.field.name}: a mask that is not a prefix cannot share a field with ranges (another row of ` +
              `this table matches ${slot.field.name} by range)`,
            "write this row's pattern as a range or a prefix, or put the masked rows in another member's table",
          ),
        );
        return;
      }
      putBig(lo, slot, bounds[0]);
      putBig(hi, slot, bounds[1]);
      return;
    }
    if (p === undefined) return;
    const m =
      p.kind === "exact"
        ? ones(width)
        : p.kind === "prefix"
          ? pad | (ones(slot.field.bits) ^ ones(slot.field.bits - p.len))
          : p.kind === "ternary"
            ? pad | p.mask
            : 0n;
    const v = p.kind === "range" ? 0n : p.value;
    putBig(value, slot, v & m);
    putBig(mask, slot, m);
  });
  const priority = kind === "exact" || kind === "lpm" ? 0 : n - index;
  const match: EntryMatch = kind === "range" ? { value, mask, lo, hi, priority } : { value, mask, priority };
  const { action, outLinks, text } = headerAction(r, attached, sharedWith);
  return {
    row: index,
    match,
    action,
    outLinks,
    at: r.at,
    text: `${parts.length === 0 ? "any" : parts.join(", ")} → ${text}`,
  };
}

/** A pattern as the range of values it matches; undefined for a mask with holes (no single range). */
function asRange(p: Pattern | undefined, bits: number): [bigint, bigint] | undefined {
  if (p === undefined) return [0n, ones(bits)];
  switch (p.kind) {
    case "range":
      return [p.lo, p.hi];
    case "exact":
      return [p.value, p.value];
    case "prefix":
      return [p.value, p.value | ones(bits - p.len)];
    case "ternary": {
      const host = ~p.mask & ones(bits);
      // A prefix mask: the bits it leaves out are all below the bits it keeps.
      return (host & (host + 1n)) === 0n ? [p.value, p.value | host] : undefined;
    }
  }
}

function inValue(i: InLink): number {
  return i === "self" ? LINK_SELF : i === "shared" ? LINK_SHARED : i;
}

function describePattern(p: Pattern, slot: FieldSlot): string {
  const f = (v: bigint): string => formatValue(v, slot.field.kind);
  switch (p.kind) {
    case "exact":
      return f(p.value);
    case "prefix":
      return `${f(p.value)}/${p.len}`;
    case "ternary":
      return `${f(p.value)} &&& ${f(p.mask)}`;
    case "range":
      return `${f(p.lo)}..${f(p.hi)}`;
  }
}

function headerAction(
  r: RowSpec,
  attached: (network: string) => number,
  shared: () => number,
): { action: EntryAction; outLinks: number[]; text: string } {
  const a = r.action;
  switch (a.kind) {
    case "forward":
    case "receive":
    case "both":
      return { action: { name: a.kind }, outLinks: [], text: a.kind };
    case "out": {
      const data = new Uint8Array(a.outLinks.length * 2);
      const view = new DataView(data.buffer);
      a.outLinks.forEach((p, i) => view.setUint16(i * 2, p, true)); // read natively (little-endian) by wasm
      // The first out-link also rides in `arg`: the common single out-link needs no second load.
      return {
        action: { name: "out", count: a.outLinks.length, arg: a.outLinks[0] ?? 0, data },
        outLinks: [...a.outLinks],
        text: `out ${a.outLinks.join(", ")}`,
      };
    }
    case "drop":
      return { action: { name: "drop" }, outLinks: [], text: "drop" };
    case "deliver":
      return { action: { name: "deliver" }, outLinks: [], text: "deliver" };
    case "shared-acquire":
    case "shared-forward":
      // Subduction: arg is the shared member of the other network on this machine.
      return {
        action: { name: a.kind, arg: shared() },
        outLinks: [],
        text:
          a.kind === "shared-acquire"
            ? "shared (to the overlay's shared member)"
            : "out shared (to the underlay's shared member)",
      };
    case "link":
      // ExternalLink: arg is the overlay member on this machine, arg2 the link it arrives on.
      return {
        action: { name: "external-link", arg: attached(a.network), arg2: a.ident },
        outLinks: [],
        text: `pop, to ${a.network} in ${a.ident}`,
      };
    case "physical":
    case "session":
    case "push":
      throw new Error(`${a.kind} is not an action of a header table`);
  }
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
  const capacity = t?.capacity ?? Math.max(DEFAULT_CAPACITY, rows.length);
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
    const action: EntryAction = { name: "push", count: vector.length, data: vector };
    return identRow(i, r.session ?? 0, 4, action, r.at, `session ${r.session ?? 0} → push ${parts.join(", ")}`);
  });
  const capacity = t.capacity ?? Math.max(DEFAULT_CAPACITY, rows.length);
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
