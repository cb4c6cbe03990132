// A description in code: the same shape a description file has once it has
// passed its JSON Schema (src/description/raw.ts is the truth, and these are its
// names for users), written as typed object literals; toYaml() writes it as a
// file `strata check` accepts, and readDescription() reads a file back into it.
// Nothing here checks a description: loading one (./emulation.ts) runs it
// through the same checks as a file, and names the place of what is wrong.

import { Document, isPair, isSeq, visit } from "yaml";
import { readDocument, readQuickDocument } from "../description/document.js";
import { Unplaced } from "../description/quick-places.js";
import type { Path } from "../description/problems.js";
import { readDescription as readDescriptionText } from "../description/read.js";
import type {
  RawAcquireRow,
  RawForwardRow,
  RawLink,
  RawLinkRef,
  RawMember,
  RawMemberTables,
  RawNetwork,
  RawReceiveRow,
  RawSendRow,
  RawSpec,
  RawTable,
  RawTransmitRow,
  RawValues,
} from "../description/raw.js";
import { SCHEMA_FILE } from "../description/schema.js";

export type Description = RawSpec;
export type NetworkDescription = RawNetwork;
export type MemberDescription = RawMember;
export type LinkDescription = RawLink;
export type MemberTables = RawMemberTables;
export type Table<Row> = RawTable<Row>;
export type AcquireRow = RawAcquireRow;
export type ForwardRow = RawForwardRow;
export type TransmitRow = RawTransmitRow;
export type SendRow = RawSendRow;
export type ReceiveRow = RawReceiveRow;
/** Field values by field name, written as a description writes them ("10.0.0.0/8", 0x0800, "02:00:…"). */
export type Values = RawValues;
/** A link at a member: its identifier, or its name. */
export type LinkRef = RawLinkRef;

/** A row of a table of role R, as the description writes it. */
export interface RowOf {
  readonly acquire: AcquireRow;
  readonly forward: ForwardRow;
  readonly transmit: TransmitRow;
  readonly send: SendRow;
  readonly receive: ReceiveRow;
}
export type TableRole = keyof RowOf;
export type Row = RowOf[TableRole];

/** `d`, typed: an object literal checked as a description (what a file can say, code can say). */
export function defineDescription<const D extends Description>(d: D): D {
  return d;
}

/** The description as YAML, a file `strata check` accepts when the description is sound. */
export function toYaml(d: Description): string {
  const doc = new Document(d);
  // Rows, links and members on one line each, as the examples write them; the maps around them as blocks.
  visit(doc, {
    Map(_, node, path) {
      const parent = path[path.length - 1];
      const members = path[path.length - 3];
      if (isSeq(parent) || (isPair(members) && String(members.key) === "members")) node.flow = true;
    },
  });
  return doc.toString({ flowCollectionPadding: true, lineWidth: 0 });
}

/**
 * A description file read as a Description (its syntax and schema checked: a SpecError names the place otherwise).
 * Integers past what a JS number holds exactly are kept as they were written, as strings.
 */
export function readDescription(file: string): Description {
  const text = readDescriptionText(file);
  // The quick reader where it can (plain YAML and JSON, as descriptions are written), else the yaml library's.
  const quick = (() => {
    try {
      return readQuickDocument(text, file, SCHEMA_FILE);
    } catch (err) {
      if (err instanceof Unplaced) return undefined;
      throw err;
    }
  })();
  const doc = quick ?? readDocument(text, file, SCHEMA_FILE, EMPTY);
  doc.problems.throwIfAny();
  return exact(doc.source.data, [], (p) => doc.source.sourceText(p)) as Description;
}

const EMPTY = {
  problem: "the description is empty; it needs a top-level `networks:` map",
  fix: "see docs/spec.md for the format",
};

/** `v` with every integer a JS number cannot hold exactly replaced by its text as written. */
function exact(v: unknown, path: Path, text: (p: Path) => string | undefined): unknown {
  if (typeof v === "number") return Number.isSafeInteger(v) || !Number.isInteger(v) ? v : (text(path) ?? v);
  if (Array.isArray(v)) return v.map((x, i) => exact(x, [...path, i], text));
  if (typeof v === "object" && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, exact(x, [...path, k], text)]));
  return v;
}
