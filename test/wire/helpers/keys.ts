// The wire tests' designs by name and their key vectors written from field values, as the data plane lays them out
// (src/wire/designs.ts keyLayout).

import { type DesignDef, designNamed, keyLayout } from "../../../src/wire/designs.js";

export function design(name: string): DesignDef {
  const d = designNamed(name);
  if (d === undefined) throw new Error(name);
  return d;
}

/** A key vector of design `d` with `values` by field name (the in-link left 0). */
export function vector(d: DesignDef, values: Record<string, bigint>): Uint8Array {
  const layout = keyLayout(d);
  const key = new Uint8Array(layout.len);
  for (const slot of layout.slots.slice(1)) {
    let v = values[slot.field.name] ?? 0n;
    for (let i = slot.len - 1; i >= 0; i--) {
      key[slot.offset + i] = Number(v & 0xffn);
      v >>= 8n;
    }
  }
  return key;
}
