// The packet list: a search's matches, listed a window at a time, and the packet chosen in it.

import { byId, el } from "./dom.js";
import { clause, fatesOf, field, numberOf, type Test, trace } from "./packets.js";
import { drawPath } from "./path.js";

/** Rows of the packet list drawn at once; the rest are reached by narrowing the search or moving through it. */
const LIST_ROWS = 400;

export const filterInput = byId("filter") as HTMLInputElement;
export const list = byId("packet-list");
const matchCount = byId("match-count");
export let matches: number[] = [];
/** The selected packet: its place in `matches`, and in the trace. */
export let chosen = -1;
let first = 0;

export function search(text: string): void {
  filterInput.value = text;
  runSearch();
  if (matches.length > 0) choose(0);
}

export function runSearch(): void {
  const p = trace;
  if (p === undefined) return;
  const clauses = filterInput.value.split(/\s+and\s+/).filter((c) => c.trim() !== "");
  const tests: Test[] = [];
  for (const c of clauses) {
    const test = clause(p, c);
    if (typeof test === "string") {
      filterInput.classList.add("bad");
      matchCount.textContent = test;
      return;
    }
    tests.push(test);
  }
  filterInput.classList.remove("bad");
  matches = [];
  for (let i = 0; i < p.trace.count; i++) if (tests.every((t) => t(i))) matches.push(i);
  chosen = -1;
  first = 0;
  renderList();
}

function renderList(): void {
  const p = trace;
  if (p === undefined) return;
  const shown = Math.min(LIST_ROWS, matches.length - first);
  matchCount.textContent =
    matches.length > LIST_ROWS
      ? `${matches.length.toLocaleString("en-US")} packets; ${first + 1}–${first + shown} listed (↑ ↓ move on)`
      : `${matches.length.toLocaleString("en-US")} packets`;
  const items: HTMLLIElement[] = [];
  for (let k = first; k < first + shown; k++) {
    const i = matches[k] ?? 0;
    const fates = fatesOf(p, i);
    const li = el(
      "li",
      { "data-packet": String(numberOf(p, i)), "aria-selected": k === chosen ? "true" : "false" },
      `${String(numberOf(p, i)).padStart(6)}  ${p.trace.endpoints[field(p, i, 1)] ?? ""}  `,
      el("span", { class: fates.some((f) => f.startsWith("dropped")) ? "fate-dropped" : "fate" }, fates.join("; ")),
    );
    items.push(li);
  }
  list.replaceChildren(...items);
}

list.addEventListener("click", (e) => {
  const li = (e.target as Element).closest("li");
  if (li === null) return;
  const k = first + [...list.children].indexOf(li);
  choose(k);
});

export function choose(k: number): void {
  const p = trace;
  if (p === undefined || k < 0 || k >= matches.length) return;
  chosen = k;
  if (k < first || k >= first + LIST_ROWS) {
    first = Math.max(0, Math.min(k - Math.floor(LIST_ROWS / 2), matches.length - LIST_ROWS));
    renderList();
  }
  for (const li of list.children) li.setAttribute("aria-selected", li === list.children[k - first] ? "true" : "false");
  list.children[k - first]?.scrollIntoView({ block: "nearest" });
  drawPath(matches[k] ?? 0);
}
