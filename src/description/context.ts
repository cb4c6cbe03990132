// What the semantic checks of one network share: where errors go, where the
// network sits in the document, and the source text of numbers.

import type { DesignDef } from "../wire/designs.js";
import type { RawValue } from "./patterns.js";
import type { Path, Problems } from "./problems.js";

export interface NetworkContext {
  readonly problems: Problems;
  /** The network's name and its path, ["networks", name]. */
  readonly network: string;
  readonly path: Path;
  /** The network's design; undefined when `header` names none (already reported). */
  readonly design: DesignDef | undefined;
  /** A value read from `path`: numbers come back as their source text when known ("0x0800", or digits beyond 2^53). */
  value(path: Path, v: string | number): RawValue;
  /**
   * Whether the schema reported an error at `rel` (a path inside the network), or under it unless `exact`.
   * Such parts are not checked again: their shape is not what the checks rely on, and the user already has an error
   * there.
   */
  schemaError(rel: Path, exact?: boolean): boolean;
}

/** The field forwarding decrements and `send` fills by default, if the design has one. */
export function hopLimitField(design: DesignDef): string | undefined {
  return design.hopLimitField;
}

/** The default hop limit of a header built by `send` (the usual OS default). */
export const DEFAULT_HOP_LIMIT = 64n;
