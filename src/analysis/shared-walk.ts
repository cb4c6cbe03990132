// What Walker.reach (./walk.ts) keeps of one class's walk so that no member's
// acquisition is walked twice, whatever origin meets it: per (member, TTL
// decrements since the origin, hop values, and the in-link when it may
// matter), the members and links every walk from there reaches, and the most
// links it crosses. In a routed fabric every origin's walk of a class runs into
// the same few acquisitions (a leaf's, the spines'), and what was quadratic in
// members — every origin walking every path again — is walked once a class.

import type { Component, MemberView, Walkable } from "./members.js";

/** What Walker.reach tells of each origin: the members it reaches (`members[0..count)`, some more than once); origin
 * −1: an inbound external link. */
export type Reached = (origin: number, members: Int32Array, count: number) => void;

/** An acquisition walked for a class: the members and links (ascending) every walk from it reaches, and the most links
 * crossed below it. */
export interface Shared {
  readonly hops: bigint;
  /** The in-link it came from, when that may change what happens (−1: any). */
  readonly inLink: number;
  readonly members: Int32Array;
  readonly links: Int32Array;
  readonly depth: number;
}

/** Where an acquisition being walked started, to be put back when it is done. */
export interface Opened {
  readonly key: number;
  readonly crossings: number;
  readonly members: number;
  readonly links: number;
  readonly deepest: number;
  readonly inLinkHole: boolean;
}

/** Whether what a member does with a class it acquires may depend on the in-link: a row of its acquire or forward table
 * names one, or a hand-over to its partner's tables. */
export function tellsInLinks(v: MemberView): boolean {
  return v.partner !== undefined || v.tables.acquire?.namesInLinks === true || v.tables.forward?.namesInLinks === true;
}

/** The receivers of `link` in component `c`, each with its in-link and what the crossing costs it
 * (SharedWalk.together's key). */
function receiversOf(a: Walkable, c: Component, link: number): string {
  const { receivers } = a.topology.link(link);
  const has = (i: number): boolean => c.has[receivers[i]?.member ?? -1] === 1;
  return receivers.map((r, i) => (has(i) ? `${r.member}/${r.inLink}/${a.linkCost(link, i)}` : "")).join();
}

/** Whether the ascending `list` holds `x`. */
export function holds(list: Int32Array, x: number): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = list[mid] ?? 0;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** `list` in a larger array, room for `size` at least. */
function grown(list: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(Math.max(list.length * 2, size));
  out.set(list);
  return out;
}

/** `list` with `x` at `at`, grown when full. */
function put(list: Int32Array<ArrayBuffer>, at: number, x: number): Int32Array<ArrayBuffer> {
  const out = at >= list.length ? grown(list, at + 1) : list;
  out[at] = x;
  return out;
}

/** One class's shared acquisitions, and what the walk from the current origin has reached so far. */
export class SharedWalk {
  /** Keyed by member (or, negative, by a link's receivers: together()) and TTL decrements. */
  readonly #states = new Map<number, Shared[]>();
  /** Per link, its receivers' group, and the groups by receivers. */
  readonly #groupOf = new Map<number, number>();
  readonly #groups = new Map<string, number>();
  /** The members acquired from the current origin, some more than once, in the first `reachedLen`. */
  reached = new Int32Array(1024);
  reachedLen = 0;
  /** The links crossed below the acquisitions being walked. */
  #crossed = new Int32Array(1024);
  #crossedLen = 0;
  /** The links on the path, in the first #pathLen. */
  #path = new Int32Array(64);
  #pathLen = 0;
  /** Acquisitions being walked. */
  #open = 0;
  /** The most links crossed below the acquisition being walked. */
  deepest = 0;
  /** Below the acquisition being walked, a black hole names the in-link a table was looked up for. */
  inLinkHole = false;
  /** Per member and per link, the last #stamp that counted it. */
  readonly #seen: Int32Array;
  readonly #seenLink: Int32Array;
  #stamp = 0;

  constructor(members: number, links: number) {
    this.#seen = new Int32Array(members);
    this.#seenLink = new Int32Array(links);
  }

  /** Whether it can walk a class of a component of `members` members and `links` links. */
  fits(members: number, links: number): boolean {
    return this.#seen.length === members && this.#seenLink.length === links;
  }

  /** The classes walked with the same tables and link costs: #groupOf and #groups kept from class to class. */
  #batch: object | undefined;

  /** A new class: nothing walked (the stamps go on from the last class's). Of the same `batch` as the last (its
   * tables and link costs): the links' receivers grouped for it kept (a string a link and class was a tenth of a
   * 5,000-member leaf-spine's walk). */
  clear(batch?: object): void {
    this.#states.clear();
    if (batch === undefined || batch !== this.#batch) {
      this.#groupOf.clear();
      this.#groups.clear();
    }
    this.#batch = batch;
    this.deepest = 0;
    this.inLinkHole = false;
    this.origin();
  }

  /** A new origin: nothing reached yet. */
  origin(): void {
    this.#pathLen = 0;
    this.reachedLen = 0;
    this.#crossedLen = 0;
    this.#open = 0;
  }

  /** The walk crosses `link`: on the path until leave(). */
  enter(link: number): void {
    this.#path = put(this.#path, this.#pathLen++, link);
    this.crossed(link);
  }

  leave(): void {
    this.#pathLen--;
  }

  /** Whether `link` is on the path. */
  onPath(link: number): boolean {
    for (let k = 0; k < this.#pathLen; k++) if (this.#path[k] === link) return true;
    return false;
  }

  /** Whether the walk from `s` crosses a link on the path (it would come back to it). */
  meetsPath(s: Shared): boolean {
    for (let k = 0; k < this.#pathLen; k++) if (holds(s.links, this.#path[k] ?? -1)) return true;
    return false;
  }

  acquired(member: number): void {
    this.reached = put(this.reached, this.reachedLen++, member);
  }

  crossed(link: number): void {
    this.#crossed = put(this.#crossed, this.#crossedLen++, link);
  }

  /** The key of what `link`'s receivers reach together, `d` TTL decrements from the origin: the same for every link
   * whose receivers in component `c` (found once a link) are the same. */
  together(link: number, d: number, a: Walkable, c: Component): number {
    let g = this.#groupOf.get(link);
    if (g === undefined) {
      const them = receiversOf(a, c, link);
      g = this.#groups.get(them) ?? this.#groups.size;
      this.#groups.set(them, g);
      this.#groupOf.set(link, g);
    }
    return -1 - (g * 512 + d);
  }

  /** The acquisition walked at `key` for these hop values from this in-link. */
  find(key: number, hops: bigint, inLink: number): Shared | undefined {
    const states = this.#states.get(key);
    if (states !== undefined)
      for (const s of states) if (s.hops === hops && (s.inLink < 0 || s.inLink === inLink)) return s;
    return undefined;
  }

  /** The acquisition walked at `key` for these hop values that find() gives for every in-link (./origin-groups.ts):
   * one walked for any in-link, with none for a single in-link before it. */
  findForAny(key: number, hops: bigint): Shared | undefined {
    for (const s of this.#states.get(key) ?? []) if (s.hops === hops) return s.inLink < 0 ? s : undefined;
    return undefined;
  }

  /** What `s` reaches is reached from here too, `crossings` links behind (again), unless the walk from here would
   * come back to a link on the path or cross more than `hopLimit` links: false then. */
  reuse(s: Shared, crossings: number, hopLimit: number): boolean {
    if (crossings + s.depth > hopLimit || this.meetsPath(s)) return false;
    this.again(s, crossings);
    return true;
  }

  /** What `s` reaches is reached from here too, `crossings` links behind. */
  again(s: Shared, crossings: number): void {
    const end = this.reachedLen + s.members.length;
    if (end > this.reached.length) this.reached = grown(this.reached, end);
    this.reached.set(s.members, this.reachedLen);
    this.reachedLen = end;
    // The links below matter only to an acquisition being walked (none: the origin's own walk).
    if (this.#open > 0) for (const l of s.links) this.crossed(l);
    this.deepest = Math.max(this.deepest, crossings + s.depth);
  }

  /** An acquisition at `key` is walked, `crossings` links behind. */
  open(key: number, crossings: number): Opened {
    const o = {
      key,
      crossings,
      members: this.reachedLen,
      links: this.#crossedLen,
      deepest: this.deepest,
      inLinkHole: this.inLinkHole,
    };
    this.deepest = crossings;
    this.inLinkHole = false;
    this.#open++;
    return o;
  }

  /** It is done: kept for these hop values, from this in-link if `byInLink` (or its black holes name it). */
  close(o: Opened, hops: bigint, inLink: number, byInLink: boolean): void {
    this.#open--;
    this.reachedLen = o.members + this.#distinct(this.reached, o.members, this.reachedLen, this.#seen);
    this.#crossedLen = o.links + this.#distinct(this.#crossed, o.links, this.#crossedLen, this.#seenLink);
    const s: Shared = {
      hops,
      inLink: byInLink || this.inLinkHole ? inLink : -1,
      members: this.reached.slice(o.members, this.reachedLen),
      links: this.#crossed.slice(o.links, this.#crossedLen).sort(),
      depth: this.deepest - o.crossings,
    };
    const states = this.#states.get(o.key);
    if (states === undefined) this.#states.set(o.key, [s]);
    else states.push(s);
    this.deepest = Math.max(o.deepest, this.deepest);
    this.inLinkHole ||= o.inLinkHole;
  }

  /** Keeps each number of `list[from..to)` once, in place, in the order first met; how many are left. */
  #distinct(list: Int32Array, from: number, to: number, seen: Int32Array): number {
    const stamp = ++this.#stamp;
    let n = from;
    for (let k = from; k < to; k++) {
      const x = list[k] ?? 0;
      if (seen[x] === stamp) continue;
      seen[x] = stamp;
      list[n++] = x;
    }
    return n - from;
  }
}
