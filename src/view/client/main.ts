// The page's script (joined by ../client-script.ts, inlined by ../page.ts): moves and zooms the
// drawing, shows a member's or a link's details, and browses the packets of a replay — find
// them, list them, draw one's path across the layers step by step, and show its bytes at each
// hop. Everything it shows comes from the page's data (../page-data.ts), written from the run's
// own files; it computes nothing about packets itself. This module starts it.

import { byId, data, el } from "./dom.js";
import { fit } from "./drawing.js";
import "./details.js";
import { filterInput, runSearch, search } from "./list.js";
import { trace } from "./packets.js";
import "./keys.js";
import { renderAnalysis } from "./analysis.js";

filterInput.addEventListener("input", () => runSearch());
const notes = byId("notes");
for (const n of data.run?.notes ?? []) notes.append(el("p", {}, n));
if (trace !== undefined) {
  byId("packets").hidden = false;
  runSearch();
}
if (data.analysis !== undefined) renderAnalysis(data.analysis);
fit();
// #packet=N opens on packet N's path.
const wanted = /^#packet=(\d+)$/.exec(location.hash);
if (wanted !== null && trace !== undefined) search(wanted[1] ?? "");
document.documentElement.dataset["ready"] = String(Math.round(performance.now()));
