// P4Info ids (P4Runtime spec §6.3, p4info.proto P4Ids): the most significant
// byte says what the object is (action 0x01, table 0x02, controller header
// 0x04, action profile 0x11, direct counter 0x13, …), the low 24 bits tell objects apart. strata
// derives them from the fully qualified name (SHA-256, low 24 bits), so an id
// stays the same across runs and across descriptions that keep the name; a
// collision moves the later name (in name order) to the next free value.

import { createHash } from "node:crypto";

export const ID_PREFIX = {
  action: 0x01,
  table: 0x02,
  controllerHeader: 0x04,
  actionProfile: 0x11,
  directCounter: 0x13,
} as const;

export type IdKind = keyof typeof ID_PREFIX;

const LOW = 0xffffff;

/** Ids for `names` (fully qualified), unique among themselves and never 0 in the low bits. */
export function allocateIds(
  kind: IdKind,
  names: readonly string[],
  taken: Set<number> = new Set(),
): Map<string, number> {
  const prefix = ID_PREFIX[kind] << 24;
  const ids = new Map<string, number>();
  for (const name of [...new Set(names)].sort()) {
    let low = createHash("sha256").update(name).digest().readUInt32BE(0) & LOW;
    while (low === 0 || taken.has((prefix | low) >>> 0)) low = (low + 1) & LOW;
    const id = (prefix | low) >>> 0;
    taken.add(id);
    ids.set(name, id);
  }
  return ids;
}

/** The kind an id's prefix names, or undefined. */
export function idKind(id: number): IdKind | undefined {
  const prefix = id >>> 24;
  return (Object.keys(ID_PREFIX) as IdKind[]).find((k) => ID_PREFIX[k] === prefix);
}
