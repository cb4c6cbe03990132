// The width of a network's destination field, in bits: the width of every address and prefix the intents write.

import type { NetworkSpec } from "../description/types.js";

export function dstWidth(net: NetworkSpec): number {
  return net.design.fields.find((f) => f.name === net.design.dstField)?.bits ?? 32;
}
