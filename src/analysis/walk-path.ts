// The path of Walker's walk (./walk.ts): the rows taken, the tables missed and
// the links crossed from the origin to where the walk is, kept as numbers in a
// typed array (no array shrinking a step) and turned into Steps only when an
// event asks for its path.

import type { TableRole } from "../wasm/abi.js";
import type { Step } from "./step.js";

const ROW = 1;
const MISS = 2;
const LINK = 3;
const ROLES: readonly TableRole[] = ["acquire", "forward", "transmit", "send", "receive"];

/** Three numbers a step, in the first `#len`. */
export class WalkPath {
  #path = new Int32Array(3 * 64);
  #len = 0;

  clear(): void {
    this.#len = 0;
  }

  /** The steps, as an event reads them. */
  readonly steps = (): Step[] => {
    const out: Step[] = [];
    const p = this.#path;
    for (let i = 0; i < this.#len; i += 3) {
      const kind = p[i];
      const a = p[i + 1] ?? 0;
      const b = p[i + 2] ?? 0;
      if (kind === LINK) out.push({ kind: "link", link: a });
      else if (kind === MISS) out.push({ kind: "miss", member: a, role: ROLES[b] ?? "acquire" });
      else out.push({ kind: "row", member: a, role: ROLES[b % 8] ?? "acquire", row: Math.floor(b / 8) });
    }
    return out;
  };

  row(member: number, role: TableRole, row: number): void {
    this.#push(ROW, member, row * 8 + ROLES.indexOf(role));
  }

  miss(member: number, role: TableRole): void {
    this.#push(MISS, member, ROLES.indexOf(role));
  }

  link(link: number): void {
    this.#push(LINK, link, 0);
  }

  pop(): void {
    this.#len -= 3;
  }

  #push(kind: number, a: number, b: number): void {
    if (this.#len + 3 > this.#path.length) {
      const grown = new Int32Array(this.#path.length * 2);
      grown.set(this.#path);
      this.#path = grown;
    }
    this.#path[this.#len] = kind;
    this.#path[this.#len + 1] = a;
    this.#path[this.#len + 2] = b;
    this.#len += 3;
  }
}
