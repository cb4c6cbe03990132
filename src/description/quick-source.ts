// A description's text read quickly: the plain YAML most descriptions are written in (block maps
// and lists, flow maps and lists, plain and quoted one-line scalars) and JSON (a flow map over many
// lines), into the same data the yaml library gives, with the offset of every node. Anything else
// (anchors, tags, block scalars, multi-line scalars, `<<`, a repeated key, tabs, CR line ends, a
// key that is not text) is left to ./source.ts: quickSource returns undefined and the caller parses
// the text with the library. The library's syntax tree costs ~20 objects per node: 100,000 table
// rows took ~8 s to load, nearly all of it there and in the garbage collector.

import { Container, type Odd, type Place, placed } from "./quick-places.js";
import { ESCAPES, plainValue } from "./quick-scalars.js";
import type { ParsedSource } from "./source.js";

/** Thrown inside the reader at the first thing it leaves to the library; never leaves this module. */
class Leave extends Error {}

const SPACE = 0x20;
const NL = 0x0a;
const HASH = 0x23;
const COLON = 0x3a;
const COMMA = 0x2c;
const DASH = 0x2d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** Characters a plain scalar may not start with (the `-`, `?`, `:` of them only before a space). */
const INDICATORS = new Set([..."-?:,[]{}#&*!|>'\"%@`"].map((c) => c.charCodeAt(0)));

function isFlowIndicator(c: number): boolean {
  return c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE;
}

/** The text's data and places, or undefined when it holds anything the reader leaves to the library. */
export function quickSource(text: string): ParsedSource | undefined {
  if (/[\t\r\uFEFF]/.test(text)) return undefined;
  const reader = new Reader(text);
  let data: unknown;
  try {
    data = reader.document();
  } catch (err) {
    if (err instanceof Leave) return undefined;
    throw err;
  }
  return placed(text, data, reader.place, (at) => new Reader(text).flowAt(at), reader.odd);
}

/** How deep the reader nests containers; descriptions nest about eight deep. */
const MAX_DEPTH = 64;

/** A plain key in block context as the reader takes it: a name, followed by `:` and a space or the line's end. */
const BLOCK_KEY = /[A-Za-z0-9_][A-Za-z0-9_./+-]*(?=:(?: |\n|$))/y;

class Reader {
  readonly #text: string;
  #i = 0;
  /** The indentation of the line #i is on, when #i is at its first character; -1 at the end. */
  #indent = 0;
  /** The place of the value read last: a flow collection's is its offset, its own places read again when asked. */
  place: Place = -1;
  /** Keys and indices of numbers not written as JavaScript writes them (0x0800, 1e3, 2^53 and more), by container. */
  readonly odd: Odd = new WeakMap();
  /** Whether the scalar read last is such a number: the container it goes into marks it. */
  #odd = false;
  /** Containers open around #i: past MAX_DEPTH, the text is left to the library rather than to the stack. */
  #depth = 0;

  constructor(text: string) {
    this.#text = text;
  }

  #c(at = this.#i): number {
    return this.#text.charCodeAt(at);
  }

  document(): unknown {
    this.#i = 0;
    this.#nextLine();
    if (this.#indent < 0) throw new Leave();
    const c = this.#c();
    if (c === LBRACE || c === LBRACKET) {
      const data = this.#flow(true, true, true);
      this.#flowSpace(true);
      if (this.#i < this.#text.length) throw new Leave();
      return data;
    }
    const data = this.#block(this.#indent);
    if (this.#indent >= 0) throw new Leave();
    return data;
  }

  /** The places of the flow collection at `at`, one level deep, read again (the text was read once already). */
  flowAt(at: number): Container {
    this.#i = at;
    this.#flow(true, true, false);
    return this.place as Container;
  }

  /** From the start of a line: past blank and comment lines to the first character of the next one. */
  #nextLine(): void {
    const text = this.#text;
    for (;;) {
      let i = this.#i;
      while (this.#c(i) === SPACE) i++;
      if (i >= text.length) {
        this.#i = text.length;
        this.#indent = -1;
        return;
      }
      const c = this.#c(i);
      if (c === NL || c === HASH) {
        const nl = text.indexOf("\n", i);
        this.#i = nl < 0 ? text.length : nl + 1;
        continue;
      }
      // Document markers and directives start at column 0.
      if (i === this.#i && (text.startsWith("---", i) || text.startsWith("...", i) || c === 0x25)) throw new Leave();
      this.#indent = i - this.#i;
      this.#i = i;
      return;
    }
  }

  /** The rest of a line after a value: spaces, maybe a comment, the line's end; then the next line. */
  #endLine(): void {
    const text = this.#text;
    let i = this.#i;
    while (this.#c(i) === SPACE) i++;
    if (this.#c(i) === HASH) {
      const before = this.#c(i - 1);
      if (before !== SPACE && before !== NL) throw new Leave();
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl;
    }
    if (i < text.length && this.#c(i) !== NL) throw new Leave();
    this.#i = i + 1;
    this.#nextLine();
  }

  #enter(): void {
    if (++this.#depth > MAX_DEPTH) throw new Leave();
  }

  #block(indent: number): unknown {
    return this.#seqEntry() ? this.#blockSeq(indent) : this.#blockMap(indent);
  }

  #seqEntry(): boolean {
    const next = this.#c(this.#i + 1);
    return this.#c() === DASH && (next === SPACE || next === NL || Number.isNaN(next));
  }

  #blockMap(indent: number): unknown {
    this.#enter();
    const map: Record<string, unknown> = {};
    const place = new Container(this.#i, true);
    for (;;) {
      const keyAt = this.#i;
      const key = this.#blockKey();
      this.#i++; // the colon
      while (this.#c() === SPACE) this.#i++;
      const c = this.#c();
      let value: unknown;
      if (c === NL || Number.isNaN(c) || c === HASH) {
        this.#endLine();
        if (this.#indent > indent) value = this.#block(this.#indent);
        else if (this.#indent === indent && this.#seqEntry()) value = this.#blockSeq(indent);
        else value = this.#empty();
      } else {
        value = this.#inline();
        this.#endLine();
      }
      if (Object.hasOwn(map, key)) throw new Leave();
      map[key] = value;
      this.#mark(map, key);
      place.keys!.push(key);
      place.keyAt.push(keyAt);
      place.items.push(this.place);
      if (this.#indent < indent) {
        this.place = place;
        this.#depth--;
        return map;
      }
      if (this.#indent > indent || this.#seqEntry()) throw new Leave();
    }
  }

  /** A key of a block map and its colon (left at it); one the reader does not take is left to the library. */
  #blockKey(): string {
    const c = this.#c();
    let key: string;
    if (c === DQUOTE || c === SQUOTE) {
      key = this.#quoted();
      if (this.#c() !== COLON) throw new Leave();
      const after = this.#c(this.#i + 1);
      if (after !== SPACE && after !== NL && !Number.isNaN(after)) throw new Leave();
    } else {
      BLOCK_KEY.lastIndex = this.#i;
      const m = BLOCK_KEY.exec(this.#text);
      if (m === null) throw new Leave();
      key = this.#plainKey(m[0]);
      this.#i += key.length;
    }
    return checkedKey(key);
  }

  /** A plain key's text, when the core schema reads it as text (not 1, true, null). */
  #plainKey(raw: string): string {
    if (typeof plainValue(raw) !== "string") throw new Leave();
    return raw;
  }

  /** An empty value (null), whose place the library gives differently: Unplaced when asked. */
  #empty(): null {
    this.place = -1;
    return null;
  }

  #blockSeq(indent: number): unknown {
    this.#enter();
    const list: unknown[] = [];
    const place = new Container(this.#i, false);
    for (;;) {
      this.#i++; // the dash
      while (this.#c() === SPACE) this.#i++;
      const c = this.#c();
      let value: unknown;
      if (c === NL || Number.isNaN(c) || c === HASH) {
        this.#endLine();
        value = this.#indent > indent ? this.#block(this.#indent) : this.#empty();
      } else if (this.#seqEntry()) {
        throw new Leave();
      } else if (this.#keyAhead()) {
        value = this.#blockMap(this.#i - this.#lineStart());
      } else {
        value = this.#inline();
        this.#endLine();
      }
      this.#mark(list, list.push(value) - 1);
      place.items.push(this.place);
      if (this.#indent > indent) throw new Leave();
      if (this.#indent < indent || !this.#seqEntry()) {
        this.place = place;
        this.#depth--;
        return list;
      }
    }
  }

  #scalar(text: string): unknown {
    const value = plainValue(text);
    this.#odd = typeof value === "number" && String(value) !== text;
    return value;
  }

  /** Marks the number just put at `key` of `container` when it was odd. */
  #mark(container: object, key: string | number): void {
    if (!this.#odd) return;
    this.#odd = false;
    let keys = this.odd.get(container);
    if (keys === undefined) this.odd.set(container, (keys = new Set()));
    keys.add(key);
  }

  #lineStart(): number {
    return this.#text.lastIndexOf("\n", this.#i - 1) + 1;
  }

  /** Whether a block key starts here (a compact map in a list entry). */
  #keyAhead(): boolean {
    const c = this.#c();
    if (c === DQUOTE || c === SQUOTE) {
      const at = this.#i;
      this.#quoted();
      const colon = this.#c() === COLON;
      this.#i = at;
      return colon;
    }
    BLOCK_KEY.lastIndex = this.#i;
    return BLOCK_KEY.test(this.#text);
  }

  /** A value on the key's line: a flow collection (on that line), a quoted or a plain scalar. */
  #inline(): unknown {
    const c = this.#c();
    if (c === LBRACE || c === LBRACKET) return this.#flow(false, false, false);
    this.place = this.#i;
    if (c === DQUOTE || c === SQUOTE) return this.#quoted();
    return this.#scalar(this.#plain(false));
  }

  /**
   * A flow collection; `top`: the document itself (JSON), whose lines may break anywhere. Its place is its offset, and
   * its items' places are kept only with `places` (else ./quick-places.ts asks for them, and they are read again then):
   * 100,000 rows `- { match: { dst: 10.0.0.0/8 }, out: 2 }` would take 200,000 containers of places. With `deep`, the
   * places of maps within are kept too, down to the first list, whose items are left to be read again (a JSON
   * description's maps down to its tables' rows, each read again alone; not its rows' maps, read again with the rows).
   */
  #flow(top: boolean, places: boolean, deep: boolean): unknown {
    this.#enter();
    const at = this.#i;
    const map = this.#c() === LBRACE;
    const close = map ? RBRACE : RBRACKET;
    const data: Record<string, unknown> | unknown[] = map ? {} : [];
    const place = places ? new Container(at, map) : undefined;
    this.#i++;
    this.#flowSpace(top);
    if (this.#c() === close) {
      this.#i++;
      this.place = place ?? at;
      this.#depth--;
      return data;
    }
    for (;;) {
      if (map) {
        const keyAt = this.#i;
        const c = this.#c();
        const quoted = c === DQUOTE || c === SQUOTE;
        const key = checkedKey(quoted ? this.#quoted() : this.#plainKey(this.#plain(true)));
        if (Object.hasOwn(data, key)) throw new Leave();
        while (this.#c() === SPACE) this.#i++;
        if (this.#c() !== COLON) throw new Leave();
        this.#i++;
        // After a plain key, the colon is followed by a space (#plain took `a:b` whole); after a quoted one, maybe not.
        this.#flowSpace(top);
        (data as Record<string, unknown>)[key] = this.#flowValue(top, deep);
        this.#mark(data, key);
        if (place !== undefined) {
          place.keys!.push(key);
          place.keyAt.push(keyAt);
          place.items.push(this.place);
        }
      } else {
        this.#mark(data, (data as unknown[]).push(this.#flowValue(top, false)) - 1);
        place?.items.push(this.place);
      }
      this.#flowSpace(top);
      const c = this.#c();
      if (c === COMMA) {
        this.#i++;
        this.#flowSpace(top);
        // A trailing comma, an empty entry: left to the library.
        if (this.#c() === close || this.#c() === COMMA) throw new Leave();
        continue;
      }
      if (c === close) {
        this.#i++;
        this.place = place ?? at;
        this.#depth--;
        return data;
      }
      // `[a: b]` (a pair in a list), anything else.
      throw new Leave();
    }
  }

  #flowValue(top: boolean, deep: boolean): unknown {
    const c = this.#c();
    if (c === LBRACE || c === LBRACKET) return this.#flow(top, deep, deep);
    const at = this.#i;
    if (c === DQUOTE || c === SQUOTE) {
      const text = this.#quoted();
      this.place = at;
      return text;
    }
    const text = this.#plain(true);
    // A plain scalar that goes on past the line's end is folded by the library: left to it.
    let i = this.#i;
    while (this.#c(i) === SPACE) i++;
    if (this.#c(i) === NL) {
      i++;
      while (this.#c(i) === SPACE || this.#c(i) === NL) i++;
      const next = this.#c(i);
      if (next !== COMMA && next !== RBRACE && next !== RBRACKET) throw new Leave();
    }
    this.place = at;
    return this.#scalar(text);
  }

  /** Spaces, line ends (only in a `top` collection) and comments inside a flow collection. */
  #flowSpace(top: boolean): void {
    for (;;) {
      const c = this.#c();
      if (c === SPACE) this.#i++;
      else if (c === NL) {
        if (!top) throw new Leave();
        this.#i++;
      } else if (c === HASH) {
        const before = this.#c(this.#i - 1);
        if (before !== SPACE && before !== NL) throw new Leave();
        const nl = this.#text.indexOf("\n", this.#i);
        this.#i = nl < 0 ? this.#text.length : nl;
      } else return;
    }
  }

  /**
   * A plain scalar on one line: up to ` #`, the line's end, a `:` before a space (a key's colon), and in a flow
   * collection a `,[]{}` or a `:` before one; its trailing spaces dropped.
   */
  #plain(flow: boolean): string {
    const text = this.#text;
    const start = this.#i;
    const first = this.#c(start);
    if (INDICATORS.has(first)) {
      const next = this.#c(start + 1);
      const dashLike = first === DASH || first === 0x3f || first === COLON;
      if (!dashLike || next === SPACE || next === NL || Number.isNaN(next) || (flow && isFlowIndicator(next))) {
        throw new Leave();
      }
    }
    let i = start;
    let end = start;
    for (;;) {
      const c = this.#c(i);
      if (Number.isNaN(c) || c === NL) break;
      if (c === SPACE) {
        if (this.#c(i + 1) === HASH) break;
        i++;
        continue;
      }
      if (c === COLON) {
        const next = this.#c(i + 1);
        if (next === SPACE || next === NL || Number.isNaN(next) || (flow && isFlowIndicator(next))) break;
      } else if (flow && isFlowIndicator(c)) break;
      i++;
      end = i;
    }
    if (end === start) throw new Leave();
    this.#i = end;
    // A block value that a key's colon ends (`a: b: c`) is an error the library words.
    if (!flow && this.#c(i) === COLON) throw new Leave();
    return text.slice(start, end);
  }

  /** A quoted scalar on one line; escapes beyond JSON's (YAML's \x, \e, …) and line breaks are left to the library. */
  #quoted(): string {
    const text = this.#text;
    const quote = this.#c();
    const start = this.#i + 1;
    if (quote === SQUOTE) {
      let out = "";
      let from = start;
      for (;;) {
        const close = text.indexOf("'", from);
        const nl = text.indexOf("\n", from);
        if (close < 0 || (nl >= 0 && nl < close)) throw new Leave();
        out += text.slice(from, close);
        if (this.#c(close + 1) !== SQUOTE) {
          this.#i = close + 1;
          return out;
        }
        out += "'";
        from = close + 2;
      }
    }
    let i = start;
    let out = "";
    let from = start;
    for (;;) {
      const c = this.#c(i);
      if (c === DQUOTE) break;
      if (Number.isNaN(c) || c < SPACE) throw new Leave();
      if (c === BACKSLASH) {
        out += text.slice(from, i);
        const e = text[i + 1];
        const simple = e === undefined ? undefined : ESCAPES[e];
        if (simple !== undefined) {
          out += simple;
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else throw new Leave();
        from = i;
        continue;
      }
      i++;
    }
    this.#i = i + 1;
    return out + text.slice(from, i);
  }
}

/** A key the reader takes: not a merge (`<<`), not `__proto__` (the library sets it apart), not too long (implicit). */
function checkedKey(key: string): string {
  if (key === "<<" || key === "__proto__" || key.length > 1000) throw new Leave();
  return key;
}
