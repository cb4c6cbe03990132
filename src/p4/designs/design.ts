// What a header design contributes to main.p4 (src/p4/program.ts composes them): one object per
// design in this folder, one file each, as assembly/wire/ has one codec per design. Statements
// name the design's headers in `hdr` and its key struct `k` (the registry's fields, p4Ident'd).

import { type DesignDef, designNamed } from "../../wire/designs.js";

/** Headers that go together: a design's header is one or more groups; a group may serve several designs (IPv4 leads gre
 * and vxlan). */
export interface HeaderGroup {
  /** Its `header … { … }` declarations. */
  readonly types: readonly string[];
  /** Its instances in headers_t, in the order the deparser emits them. */
  readonly instances: readonly { readonly type: string; readonly name: string }[];
  /** What StrataComputeChecksum does for it (a pushed header's checksum), if anything. */
  readonly checksum?: readonly string[];
}

export interface DesignP4 {
  /** The registry's design (src/wire/designs.ts). */
  readonly design: DesignDef;
  /** The groups its header is made of, outermost first: what a pop takes off and a push's length counts. */
  readonly header: readonly HeaderGroup[];
  /** Payload headers the parser reads behind it, read only, never popped (IPv4's transport ports). */
  readonly payload?: readonly HeaderGroup[];
  /** The parser state its header starts in. */
  readonly start: string;
  /** Its parser states. */
  readonly states: readonly string[];
  /** Statements filling `k` from the parsed headers (absent tags and ports read as 0). */
  readonly keys: readonly string[];
  /** Statements putting its header in front of a payload of `payload_len` bytes from a send row's `k`. */
  readonly push: readonly string[];
  /** The packet's length in bytes as the header states it (bit<32>), when it does: bytes past it are not the packet's.
   * */
  readonly statedLen?: string;
  /** Statements taking one off the hop limit, or dropping the packet at 1 (forwarding with `ttl: decrement`). */
  readonly decrement?: readonly string[];
}

/** The registry's design of this name (a design module's own; a programmer error if absent). */
export function registered(name: string): DesignDef {
  const d = designNamed(name);
  if (d === undefined) throw new Error(`no header design ${name} in src/wire/designs.ts`);
  return d;
}

/** `k.<field> = hdr.<header>.<field>;` for fields named alike in the key struct and the header. */
export const keysFrom = (header: string, fields: readonly string[]): string[] =>
  fields.map((f) => `k.${f} = hdr.${header}.${f};`);

/** `hdr.<header>.<field> = k.<field>;` for fields a push copies from the send row. */
export const fromKeys = (header: string, fields: readonly string[]): string[] =>
  fields.map((f) => `hdr.${header}.${f} = k.${f};`);

/** A parser state taking one header (checked, when `check` is given) and accepting. */
export function acceptState(state: string, header: string, check?: string): string[] {
  return [
    `state ${state} {`,
    `    packet.extract(hdr.${header});`,
    ...(check !== undefined ? [`    verify(${check}, error.StrataBadHeader);`] : []),
    "    transition accept;",
    "}",
  ];
}

/** A hop limit in one field, taken off without more ado (no checksum covers it). */
export const decrementField = (field: string): string[] => [
  `if (${field} <= 1) { drop_packet(DROP_TTL_EXPIRED); } else { ${field} = ${field} - 1; }`,
];
