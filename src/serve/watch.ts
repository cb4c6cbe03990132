// Desired state for a running emulation: the description file is what the
// emulation should be. reload() reads it, compiles it and reconciles the data
// plane to it (src/control/reconcile.ts) between packet batches, as one atomic
// step; a description with errors is reported line by line and changes nothing.
// With --watch the file is watched (fs.watch on its directory, since editors
// replace a file by renaming a new one over it, and on the directory of every
// symbolic link on the way to the file it names, since a link may be edited
// through or swapped, as Kubernetes swaps a ConfigMap's ..data link) and reloaded
// a moment after it stops changing; SIGHUP and the `reload` command reload it too.
//
// While serving, only tables change: the emulation's ports, exits and recordings
// are bound to its members and links, so a description that changes them is
// refused (restart strata serve for that).
//
// Every read of the file, for a reload or to see whether it changed, first opens
// it without waiting (O_NONBLOCK) and refuses anything but a regular file: opening
// a named pipe waits for a writer, and a reload waiting there held the event loop,
// its packets, commands and signals. What is read is bounded by the description's
// limit (MAX_DESCRIPTION_BYTES), however long the file grows.

import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  type FSWatcher,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  watch,
} from "node:fs";
import { dirname, resolve } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import type { Change, Resolved, Target } from "../control/reconcile.js";
import { Reloader } from "../control/reload.js";
import { SpecError } from "../description/problems.js";
import { recoverAllocation } from "../control/allocation.js";
import { MAX_DESCRIPTION_BYTES, readDescription } from "../description/read.js";
import { InputError } from "../errors.js";
import type { Engine } from "../engine/engine.js";

/** How long the file must stay unchanged before it is read: an editor's save is several events. */
export const DEBOUNCE_MS = 150;

export interface ReloadResult {
  readonly ok: boolean;
  /** One line for the user (errors: one per problem, without "strata: "). */
  readonly lines: readonly string[];
  readonly change?: Change;
}

const reloaders = new WeakMap<Engine, DescriptionReloader>();

/** The reloader attached to `em`, if any (the `reload` control command uses it). */
export function reloaderOf(em: Engine): DescriptionReloader | undefined {
  return reloaders.get(em);
}

export class DescriptionReloader {
  readonly file: string;
  readonly #em: Engine;
  readonly #log: (r: ReloadResult) => void;
  /** A watcher per directory that can change what the file reads (watchedDirs). */
  readonly #watchers = new Map<string, FSWatcher>();
  #watching = false;
  #timer: NodeJS.Timeout | undefined;
  /** Reloads run one after another. */
  #chain: Promise<unknown> = Promise.resolve();
  /** What the file held when last applied (or refused): a save that changes nothing is not reported. */
  #lastSeen: string | undefined;
  /** Reads the file at the cost of what an edit touched (../control/reload.ts). */
  readonly #loader: Reloader;

  /** `loader`: the one that loaded what `em` runs, if any (its tables' rows are then those installed, and a table an
   * edit leaves alone is not compared again). */
  constructor(em: Engine, file: string, log: (r: ReloadResult) => void = () => {}, loader?: Reloader) {
    this.#em = em;
    this.file = file;
    this.#log = log;
    this.#lastSeen = look(file).seen;
    this.#loader = loader ?? new Reloader(file);
    // Identifiers the description leaves out keep those installed (seed 000: allocations are stable).
    this.#loader.previous = () => recoverAllocation(em.installed.compiled);
    reloaders.set(em, this);
  }

  /** Work the reloads did: whole loads, and members read and compiled alone. */
  get work(): { readonly loads: number; readonly members: number } {
    return this.#loader.work;
  }

  /** Reads, compiles and applies the description between batches; never throws for bad input. */
  reload(): Promise<ReloadResult> {
    const next = this.#chain.then(() => this.#reload());
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #reload(): Promise<ReloadResult> {
    const now = look(this.file);
    this.#lastSeen = now.seen;
    if (now.kind !== undefined)
      return this.#report({
        ok: false,
        lines: [
          `${this.file}: cannot reload: it is ${now.kind}, not a regular file ` +
            `(make it a file again; the emulation goes on with the description it had)`,
        ],
      });
    let compiled: CompiledSpec | undefined;
    try {
      // The text loaded last again (a `reload` to undo other writers' changes): what it compiled to.
      compiled = this.#loader.load(readDescription(this.file))?.compiled ?? this.#loader.compiled;
    } catch (err) {
      return this.#report(refused(err));
    }
    const em = this.#em;
    const next = compiled;
    if (next === undefined) throw new Error("a reload loaded nothing");
    try {
      // Against what is installed now, other writers' changes (control commands, a controller) included.
      const change = await em.between(() => em.reconcile(next, { rebuild: false }));
      return this.#report({ ok: true, lines: [`reloaded ${this.file}: ${describe(change)}`], change });
    } catch (err) {
      return this.#report(refused(err));
    }
  }

  /** Takes a link, member or machine down (or brings it up) between batches; it stays so across reloads. A UsageError
   * names what is not there. */
  setDown(target: Target, down: boolean): Promise<Resolved> {
    return this.#em.between(() => this.#em.setDown(target, down));
  }

  #report(r: ReloadResult): ReloadResult {
    this.#log(r);
    return r;
  }

  /**
   * Watches the file: a change reloads it once the file has been quiet for `debounceMs`. Any
   * change in a watched directory is a reason to read the file again; only new text reloads it.
   */
  watch(debounceMs = DEBOUNCE_MS): void {
    if (this.#watching) return;
    this.#watching = true;
    const changed = (): void => {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        // A link swapped or repointed: watch where the file leads now.
        this.#watchDirs(changed);
        const { seen } = look(this.file);
        // Gone for a moment while an editor replaces it, or saved unchanged: wait for the next event.
        if (seen === undefined || seen === this.#lastSeen) return;
        void this.reload();
      }, debounceMs);
    };
    this.#watchDirs(changed);
  }

  #watchDirs(changed: () => void): void {
    if (!this.#watching) return;
    const dirs = watchedDirs(this.file);
    for (const [dir, w] of this.#watchers) {
      if (dirs.includes(dir)) continue;
      w.close();
      this.#watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (this.#watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, changed);
        // A directory that goes away (a swapped ConfigMap's old data) ends its watcher; the next change re-resolves.
        w.on("error", () => {
          w.close();
          if (this.#watchers.get(dir) === w) this.#watchers.delete(dir);
        });
        this.#watchers.set(dir, w);
      } catch {
        // Gone already: the directories that remain say when it is back.
      }
    }
  }

  close(): void {
    this.#watching = false;
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    reloaders.delete(this.#em);
  }
}

/**
 * The directories where a change can change what `file` reads: the one it is named in, and,
 * for every symbolic link on the way (the file a link to a link …, or a linked directory in
 * a link's target), the directory each link is in and the real file's.
 */
export function watchedDirs(file: string): string[] {
  const dirs = new Set<string>();
  let path = resolve(file);
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    // The directory the name is in, as it really is (a link's entry lives there; a watch on a linked directory would
    // stay on its old target).
    dirs.add(realOrUndefined(dirname(path)) ?? dirname(path));
    let target: string;
    try {
      target = readlinkSync(path);
    } catch {
      break; // not a link (or not there): the end of the chain
    }
    path = resolve(dirname(path), target);
  }
  const real = realOrUndefined(file);
  if (real !== undefined) dirs.add(dirname(real));
  return [...dirs];
}

/** Links followed before giving up (the kernel's own limit is 40). */
const MAX_LINK_HOPS = 40;

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function refused(err: unknown): ReloadResult {
  if (err instanceof SpecError)
    return { ok: false, lines: [...err.lines(), "the emulation goes on with the description it had"] };
  if (err instanceof InputError)
    return { ok: false, lines: [err.message, "the emulation goes on with the description it had"] };
  throw err;
}

function describe(c: Change): string {
  const parts = [`${c.inserted} rows inserted`, `${c.modified} modified`, `${c.deleted} deleted`];
  if (c.tablesBuilt > 0) parts.push(`${c.tablesBuilt} tables built`);
  if (c.tablesRemoved > 0) parts.push(`${c.tablesRemoved} tables removed`);
  return parts.join(", ");
}

/**
 * What `file` holds now, without waiting and without reading past the description's limit: `seen`
 * tells one content from another (a digest of a regular file's bytes, or what else it is), `kind`
 * names what it is when it is not a regular file. Nothing is seen when it cannot be opened.
 */
function look(file: string): { readonly seen?: string; readonly kind?: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    // A socket cannot be opened at all.
    return (err as NodeJS.ErrnoException).code === "ENXIO" ? { seen: "a socket", kind: "a socket" } : {};
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      const kind = kindOf(stat);
      return { seen: kind, kind };
    }
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 16);
    for (let total = 0; total <= MAX_DESCRIPTION_BYTES;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, MAX_DESCRIPTION_BYTES + 1 - total), null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      total += n;
    }
    return { seen: `sha256 ${hash.digest("hex")}` };
  } catch {
    return {};
  } finally {
    closeSync(fd);
  }
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return "a named pipe";
  if (stat.isDirectory()) return "a directory";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "a special file";
}
