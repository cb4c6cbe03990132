// A packet's bytes at one step of its path: each layer's fields, and a hex dump that lights the
// bytes of the layer under the pointer.

import type { ByteView } from "../page-data.js";
import { data, el } from "./dom.js";
import { trace } from "./packets.js";

/** Shows the bytes the page holds of `packet` at its step `k`, if it holds them. */
export function showBytes(packet: number, k: number): void {
  const box = document.getElementById("decoded");
  if (box === null) return;
  box.replaceChildren();
  const bytes = trace?.trace.bytes;
  const v = bytes?.steps[String(packet)]?.[k] ?? -1;
  const shown = v < 0 ? undefined : bytes?.views[v];
  if (bytes === undefined || shown === undefined) return;
  box.append(renderBytes(shown, bytes.records[shown.record] ?? ""));
}

function renderBytes(v: ByteView, hex: string): HTMLElement {
  const len = hex.length / 2;
  const wrap = el(
    "div",
    { class: "decoded" },
    el("div", {}, `${v.what}: ${len - v.at} bytes${v.at > 0 ? ` (after ${v.at} bytes taken off before)` : ""}`),
  );
  const dump = el("pre", { class: "hex" });
  v.layers.forEach((layer, n) => {
    const context = v.only && n > 0;
    const d = el("details", { class: `layer${context ? " context" : ""}` });
    if (!context) d.setAttribute("open", "");
    const title =
      `${layer.design}: ${data.designs[layer.design] ?? ""}, bytes ${layer.at}–${layer.at + layer.len - 1}` +
      (context ? " (carried inside)" : "");
    const table = el("table");
    for (const [name, value, where] of layer.fields)
      table.append(el("tr", {}, el("td", {}, name), el("td", {}, value), el("td", { class: "where" }, where)));
    d.append(el("summary", {}, title), table);
    d.addEventListener("mouseenter", () => highlight(dump, hex, v.at, layer.at, layer.at + layer.len));
    d.addEventListener("mouseleave", () => highlight(dump, hex, v.at, -1, -1));
    wrap.append(d);
  });
  const last = v.layers.at(-1);
  const end = last === undefined ? v.at : last.at + last.len;
  if (end < len) wrap.append(el("div", { class: "layer" }, `payload: ${len - end} bytes`));
  highlight(dump, hex, v.at, -1, -1);
  wrap.append(dump);
  return wrap;
}

/**
 * A hex dump, 16 bytes a line; bytes before `skip` dimmed, [from, to) highlighted. Each run of bytes alike is one node,
 * not a node a byte: 200,000 bytes were 212,500 nodes, ~1.7 s to lay out in chromium (AMD EPYC, 2 vCPU), and drawn
 * again each time the pointer enters or leaves a layer.
 */
function highlight(pre: HTMLElement, hex: string, skip: number, from: number, to: number): void {
  const all = document.createDocumentFragment();
  let run = "";
  let runCls = "";
  const flush = (): void => {
    if (run !== "") all.appendChild(runCls === "" ? document.createTextNode(run) : el("span", { class: runCls }, run));
    run = "";
  };
  const add = (text: string, cls: string): void => {
    if (cls !== runCls) {
      flush();
      runCls = cls;
    }
    run += text;
  };
  const len = hex.length / 2;
  for (let line = 0; line < len; line += 16) {
    add(`${line.toString(16).padStart(4, "0")}  `, "");
    for (let b = line; b < Math.min(len, line + 16); b++)
      add(
        `${hex.slice(2 * b, 2 * b + 2)}${b % 16 === 7 ? "  " : " "}`,
        b < skip ? "skip" : b >= from && b < to ? "hl" : "",
      );
    add("\n", "");
  }
  flush();
  pre.replaceChildren(all);
}
