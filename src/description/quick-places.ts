// Where the nodes of a quickly read description are (./quick-source.ts): each container's offset
// and its keys' and items' places, walked beside the data as the yaml library's document is by
// ./source.ts, to the same line and column (the library's LineCounter: 1-based, by "\n").

import type { Locator, Path } from "./problems.js";
import type { ParsedSource } from "./source.js";

/**
 * Thrown when a place asked of a quick source is one the library would give differently (an
 * empty value's): the caller reads the text again with the library.
 */
export class Unplaced extends Error {
  constructor() {
    super("this place is left to the yaml library");
    this.name = "Unplaced";
  }
}

/**
 * Where a container is (its offset) and where its keys and items are; a scalar is its offset (-1: an empty value), and
 * so is a flow collection until its places are asked for.
 */
export type Place = number | Container;

export class Container {
  /** Keys of a map, in order; undefined for a list. */
  readonly keys: string[] | undefined;
  readonly keyAt: number[];
  readonly items: Place[] = [];
  byKey: Map<string, number> | undefined;

  constructor(
    readonly at: number,
    map: boolean,
  ) {
    this.keys = map ? [] : undefined;
    this.keyAt = [];
  }

  /** The index of the entry at `seg`, as the library's walk finds it (a list by number, a map by String(seg)). */
  indexOf(seg: string | number): number {
    if (this.keys === undefined) return typeof seg === "number" && seg >= 0 && seg < this.items.length ? seg : -1;
    const key = String(seg);
    if (this.keys.length <= 8) return this.keys.indexOf(key);
    this.byKey ??= new Map(this.keys.map((k, i) => [k, i]));
    return this.byKey.get(key) ?? -1;
  }
}

/** The ParsedSource of a quick read: the locator and source text walk the places beside the data. */
export function placed(
  text: string,
  data: unknown,
  top: Place,
  flowAt: (offset: number) => Container,
  odd: Odd,
): ParsedSource {
  let root = top;
  let lineStarts: number[] | undefined;
  const pos = (offset: number): { line: number; column: number } => {
    if (offset < 0) throw new Unplaced();
    lineStarts ??= starts(text);
    // The last line start at or before offset (1-based line), as the library's LineCounter.
    let lo = 0;
    let hi = lineStarts.length;
    while (lo + 1 < hi) {
      const mid = (lo + hi) >>> 1;
      if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid;
    }
    return { line: lo + 1, column: offset - (lineStarts[lo] ?? 0) + 1 };
  };
  const walk = (path: Path): { place: Place; keyAt: number | undefined; value: unknown; exact: boolean } => {
    let place = root;
    let value = data;
    let keyAt: number | undefined;
    let parent: Container | undefined;
    let index = 0;
    for (const seg of path) {
      // A flow collection's places are read when first asked for.
      if (typeof place === "number" && place >= 0 && typeof value === "object" && value !== null) {
        place = flowAt(place);
        if (parent === undefined) root = place;
        else parent.items[index] = place;
      }
      const i = typeof place === "number" ? -1 : place.indexOf(seg);
      if (typeof place === "number" || i < 0) return { place, keyAt: undefined, value, exact: false };
      keyAt = place.keys === undefined ? undefined : place.keyAt[i];
      value = place.keys === undefined ? (value as unknown[])[i] : (value as Record<string, unknown>)[place.keys[i]!];
      parent = place;
      index = i;
      place = place.items[i]!;
    }
    return { place, keyAt, value, exact: true };
  };
  const at = (place: Place): number => (typeof place === "number" ? place : place.at);
  const locator: Locator = {
    locate(path, key) {
      const found = walk(path);
      return pos(key && found.keyAt !== undefined ? found.keyAt : at(found.place));
    },
  };
  return {
    data,
    locator,
    sourceText(path) {
      // A number written as JavaScript writes it is its own text, found without its place (every `out: 2` asks).
      const written = plainNumber(data, path, odd);
      if (written !== undefined) return written;
      const found = walk(path);
      const container = typeof found.value === "object" && found.value !== null;
      if (!found.exact || typeof found.place !== "number" || container) return undefined;
      if (found.place < 0) throw new Unplaced();
      if (typeof found.value === "string") return found.value;
      // A plain number, true/false or null: the core schema's words are made of these characters only.
      const m = /[0-9A-Za-z.+\-_~]*/y;
      m.lastIndex = found.place;
      return m.exec(text)?.[0];
    },
  };
}

/** Keys and indices of the numbers of each container not written as JavaScript writes them. */
export type Odd = WeakMap<object, Set<string | number>>;

/** The text of the number at `path` when it is written as String(n) writes it; undefined for anything else. */
function plainNumber(data: unknown, path: Path, odd: Odd): string | undefined {
  let value = data;
  let container: object | undefined;
  for (const seg of path) {
    if (typeof value !== "object" || value === null) return undefined;
    container = value;
    if (Array.isArray(value)) {
      if (typeof seg !== "number" || !(seg >= 0 && seg < value.length)) return undefined;
      value = value[seg] as unknown;
    } else {
      if (!Object.hasOwn(value, String(seg))) return undefined;
      value = (value as Record<string, unknown>)[String(seg)];
    }
  }
  const last = path[path.length - 1];
  if (typeof value !== "number" || container === undefined || last === undefined) return undefined;
  return odd.get(container)?.has(Array.isArray(container) ? last : String(last)) === true ? undefined : String(value);
}

function starts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) out.push(i + 1);
  return out;
}
