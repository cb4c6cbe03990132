// The analysis of a running emulation (`strata serve --analyze`): the relations
// of docs/analysis.md, kept current as the tables change. After a table write
// (a control command, a reload, a P4Runtime controller's write) the rows that
// changed are those the caller says (change, apply: taken out, put back or
// given a new action; serve reads them from the ledger's journal of writes),
// or are found by comparing the installed entries with what the analysis has
// (update: Analysis.changesFrom); a controller's entries that are no
// description row, Analysis.setOthers; links and members an update took down,
// Analysis.setDown. Only the header classes they match are walked again
// (ComponentRelation.update), as NetPlumber and APKeep do; the traffic
// model's relation, small, is walked afresh for the components touched. When
// the writes have cut too many classes, the analysis is made afresh
// (./live-rebuild.ts).
//
// Its budget (./budget.ts; `serve --analyze` takes analyze's) bounds the
// first analysis and, afresh, each update: an update the budget stops leaves
// the relations short of some classes, and line() says so. Rows that cut more
// classes than it allows stop the analysis following the tables at all.

import type { CompiledSpec } from "../control/compiled.js";
import type { Installed } from "../control/install.js";
import { Analysis, type AnalysisOptions, type Component, type RowChange } from "./analysis.js";
import { BudgetStop, NODES_HINT, type Stop } from "./budget.js";
import type { DownNames } from "./down.js";
import type { OtherEntries } from "./entry-rows.js";
import type { HeaderSpace } from "./header-space.js";
import { currentProperties, type PropertyResult, type Relations } from "./properties.js";
import { type Freshness, freshness, rowsHeld, stale } from "./live-rebuild.js";
import { ComponentRelation } from "./relations.js";
import type { Affected } from "./tables.js";
import { type TrafficRelation, trafficRelation } from "./traffic.js";

/** What one update did. */
export interface LiveUpdate {
  /** Description rows (or entries beyond them: a controller's) taken out or put back, or tables replaced (a reload). */
  readonly rows: number;
  /** Links and members taken down or brought up (`strata run --updates`). */
  readonly down?: number;
  /** Header classes walked again (every class of a component a row without patterns touches). */
  readonly classes: number;
  readonly ms: number;
}

/** What changed, as the caller knows it (LiveAnalysis.change). */
export interface Change {
  readonly compiled?: CompiledSpec | undefined;
  readonly changes?: readonly RowChange[] | (() => readonly RowChange[]);
  readonly others?: OtherEntries | undefined;
  readonly down?: DownNames | undefined;
}

export class LiveAnalysis {
  #analysis: Analysis;
  readonly #options: Pick<AnalysisOptions, "budget" | "hopLimit">;
  #compiled: CompiledSpec;
  /** The links and members down, as last said (an analysis afresh starts from them). */
  #down: DownNames | undefined;
  /** What the analysis made last afresh measured, and the work the writes since did (./live-rebuild.ts). */
  #fresh: Freshness;
  #work = 0;
  /** Times the analysis was made afresh since the first. */
  #rebuilds = 0;
  readonly #relation = new Map<Component, ComponentRelation>();
  readonly #traffic = new Map<Component, TrafficRelation>();
  #last: LiveUpdate | undefined;
  /** Where the budget stopped the analysis or its last update, if it did. */
  #stop: Stop | undefined;
  /** New rows cut more classes than the budget allows: the analysis no longer follows the tables. */
  #frozen = false;
  /** Spaces whose classes the update split: the traffic model's sessions hold the classes they had. */
  readonly #split = new Set<HeaderSpace>();

  /** `options.budget` and `options.hopLimit` as `strata analyze` takes them (src/cli/commands/analyze.ts). */
  constructor(compiled: CompiledSpec, options: Pick<AnalysisOptions, "budget" | "hopLimit"> = {}) {
    this.#options = options;
    this.#compiled = compiled;
    this.#analysis = new Analysis(compiled, options);
    this.#fresh = this.#follow(this.#analysis);
    this.#stop = this.#analysis.budget.stopped;
  }

  /** The analysis of the tables as they are (made afresh now and then: ./live-rebuild.ts). */
  get analysis(): Analysis {
    return this.#analysis;
  }

  /** Times the analysis was made afresh (its classes too many, or its store too large) since the first. */
  get rebuilds(): number {
    return this.#rebuilds;
  }

  /** The relations of `a` walked, and its spaces followed; what it measures afresh. */
  #follow(a: Analysis): Freshness {
    this.#relation.clear();
    this.#traffic.clear();
    this.#split.clear();
    for (const c of a.components) {
      this.#relation.set(c, new ComponentRelation(a, c));
      this.#traffic.set(c, trafficRelation(a, c));
    }
    for (const space of a.spaces.all()) {
      // Once now, so that no write has to walk the whole diagram.
      space.countHeaders();
      space.listen({
        split: () => this.#split.add(space),
        died: () => undefined,
        joined: () => this.#split.add(space),
      });
    }
    return freshness(a);
  }

  /** The analysis made afresh from the tables as they are, unless the budget stops it (then the old one goes on). */
  #rebuild(): void {
    const old = this.#analysis;
    const held = rowsHeld(old, this.#compiled);
    old.budget.renew();
    try {
      const a = new Analysis(this.#compiled, {
        ...this.#options,
        ...(this.#down === undefined ? {} : { down: this.#down }),
      });
      if (!a.built) throw new BudgetStop(a.budget.stopped?.limit ?? "nodes", "the analysis afresh was cut short");
      a.apply(held);
      a.setOtherRows(old.otherRows);
      a.refreshCosts(new Map());
      this.#analysis = a;
      this.#fresh = this.#follow(a);
      this.#rebuilds++;
    } catch (err) {
      if (!(err instanceof BudgetStop)) throw err;
      // Not now: after as much work again.
      if (this.#analysis !== old) throw err;
      old.budget.renew();
    }
    this.#work = 0;
  }

  /** Where the budget stopped the analysis or its last update (the relations lack some classes), if it did. */
  get stopped(): Stop | undefined {
    return this.#stop;
  }

  get relations(): Relations {
    return { relation: this.#relation, traffic: this.#traffic };
  }

  /** The last update that changed something. */
  get last(): LiveUpdate | undefined {
    return this.#last;
  }

  /** Brings the relations to the tables `installed` holds (its rows: a worker thread has no data plane), with, when
   * given, the entries beyond the description's rows `others` says (a controller's) and the links and members `down`
   * says are down; does nothing when they are the same. Every installed row is compared with the analysis's: change()
   * takes the changes when the caller knows them. */
  update(installed: Pick<Installed, "compiled" | "entries">, down?: DownNames, others?: OtherEntries): LiveUpdate {
    return this.change({
      compiled: installed.compiled,
      changes: () => this.analysis.changesFrom(installed),
      down,
      others,
    });
  }

  /**
   * Brings the relations to the tables after the writes `changes` (rows taken out, put back or given a new action,
   * known to the caller): what update() does without comparing every installed entry, so that a write costs what its
   * rows touch.
   */
  apply(changes: readonly RowChange[]): LiveUpdate {
    return this.change({ changes });
  }

  /**
   * Brings the relations to the tables after what the caller says changed, and nothing else: a new description
   * (`compiled`, a reload: each table it changed replaced), rows taken out, put back or given a new action (`changes`,
   * or a function that finds them once the tables are replaced), the entries beyond the description's rows
   * (`others`, all of them), the links and members down (`down`, all of them).
   */
  change(what: Change): LiveUpdate {
    return this.#guarded(performance.now(), (t0) => this.#change(what, t0));
  }

  /** `f` within a renewed budget: new rows that cut more classes than it allows freeze the analysis. */
  #guarded(t0: number, f: (t0: number) => LiveUpdate): LiveUpdate {
    const a = this.analysis;
    if (!a.built || this.#frozen) return { rows: 0, classes: 0, ms: 0 };
    a.budget.renew();
    try {
      return f(t0);
    } catch (err) {
      // New rows cut more classes than the budget allows: the relations are left as they are, and no longer followed.
      if (!(err instanceof BudgetStop)) throw err;
      this.#frozen = true;
      this.#stop = a.budget.stopped;
      return { rows: 0, classes: 0, ms: performance.now() - t0 };
    }
  }

  #change(what: Change, t0: number): LiveUpdate {
    const a = this.analysis;
    const affected = new Map<Component, Affected>();
    let rows = 0;
    if (what.compiled !== undefined && what.compiled !== this.#compiled) {
      // A reload: the same members and links (serve refuses others), new tables.
      a.replaceTables(what.compiled, affected);
      this.#compiled = what.compiled;
      rows += affected.size;
    }
    const changes = typeof what.changes === "function" ? what.changes() : (what.changes ?? []);
    rows += changes.length;
    a.apply(changes, affected);
    if (what.others !== undefined) rows += a.setOthers(what.others, affected);
    const downs = what.down === undefined ? 0 : a.setDown(what.down, affected);
    this.#down = what.down ?? this.#down;
    // What a virtual link costs follows its underlay's rows and links.
    if (affected.size > 0) a.refreshCosts(affected);
    const done = this.#walkAgain(affected, rows, downs, t0);
    this.#work += done.rows + done.classes;
    if (stale(a, this.#fresh, this.#work)) {
      this.#rebuild();
      return { ...done, ms: performance.now() - t0 };
    }
    return done;
  }

  /** The relations walked again where `affected` says, after `rows` row changes and `downs` links and members down. */
  #walkAgain(affected: ReadonlyMap<Component, Affected>, rows: number, downs: number, t0: number): LiveUpdate {
    const a = this.analysis;
    let classes = 0;
    // A component no row change touched walks its sessions again where their classes split.
    for (const c of a.components)
      if (!affected.has(c) && this.#split.has(c.space)) this.#traffic.set(c, trafficRelation(a, c));
    this.#split.clear();
    for (const [c, x] of affected) {
      const rel = this.#relation.get(c);
      if (rel?.updatable === true) rel.update(x);
      else this.#relation.set(c, new ComponentRelation(a, c));
      classes += x === "all" ? c.space.atoms().length : x.length;
      this.#traffic.set(c, trafficRelation(a, c));
    }
    const done = { rows, ...(downs > 0 ? { down: downs } : {}), classes, ms: performance.now() - t0 };
    if (affected.size > 0 || rows > 0 || downs > 0) {
      this.#last = done;
      this.#stop = a.budget.stopped;
    }
    return done;
  }

  properties(): PropertyResult[] {
    return currentProperties(this.analysis, this.relations);
  }

  /** One line for `counts`: which properties fail now, and what the last update cost. */
  line(): string {
    const ps = this.properties();
    const failing = ps.filter((p) => !p.holds && p.unknown !== true).map((p) => p.name);
    const unknown = ps.filter((p) => p.unknown === true).length;
    const checked = ps.length - unknown;
    const verdict =
      failing.length === 0
        ? unknown === 0
          ? `every property holds (${ps.length})`
          : `no property of the ${checked} checked fails`
        : `${failing.length} of ${unknown === 0 ? ps.length : `the ${checked} checked`} properties fail: ` +
          failing.join(", ");
    const cut =
      this.#stop === undefined
        ? ""
        : `; cut short by its ${this.#stop.limit} limit in ${this.#stop.stage}` +
          `${this.#stop.limit === "nodes" ? ` (${NODES_HINT})` : ""}: ${unknown} ` +
          `propert${unknown === 1 ? "y" : "ies"} not known`;
    const last =
      this.#last === undefined
        ? ""
        : `; last ` +
          `update: ${this.#last.rows} row${this.#last.rows === 1 ? "" : "s"}, ${this.#last.classes} header ` +
          `class${this.#last.classes === 1 ? "" : "es"} walked again in ${this.#last.ms.toFixed(2)} ms`;
    return `analysis: ${verdict}${cut}${last}`;
  }
}
