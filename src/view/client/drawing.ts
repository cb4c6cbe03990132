// The drawing: its members' and links' elements by the names traces use, and the view of it
// (the SVG's viewBox), moved, zoomed and fitted.

import { canvas, svg } from "./dom.js";

export const ZOOM_STEP = 1.25;
export const full = { x: 0, y: 0, w: svg.viewBox.baseVal.width, h: svg.viewBox.baseVal.height };
export const view = { ...full };

export const nodeEls = new Map<string, SVGGElement>();
export const memberEls = new Map<string, SVGGElement>();
for (const g of svg.querySelectorAll<SVGGElement>("g.node")) {
  const id = g.dataset["node"] ?? "";
  nodeEls.set(id, g);
  const member = g.dataset["member"];
  if (member !== undefined) memberEls.set(member, g);
  g.setAttribute("tabindex", "0");
}
export const linkEls = new Map<string, SVGGElement>();
for (const g of svg.querySelectorAll<SVGGElement>("g.link")) {
  linkEls.set(g.dataset["link"] ?? "", g);
  g.setAttribute("tabindex", "0");
}

export function applyView(): void {
  svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
}

/** The most a fitted drawing is magnified: a small description stays at a readable size, not a poster. */
const FIT_MAX_SCALE = 1.5;

export function fit(): void {
  const r = canvas.getBoundingClientRect();
  const scale = Math.min(r.width / full.w, r.height / full.h);
  const k = scale > FIT_MAX_SCALE ? scale / FIT_MAX_SCALE : 1;
  const w = full.w * k;
  const h = full.h * k;
  Object.assign(view, { x: full.x - (w - full.w) / 2, y: full.y - (h - full.h) / 2, w, h });
  applyView();
}

/** Zooms by `factor` (> 1 in) about a point of the drawing (its centre by default). */
export function zoom(factor: number, cx = view.x + view.w / 2, cy = view.y + view.h / 2): void {
  const w = Math.min(full.w * 4, Math.max(40, view.w / factor));
  const h = (view.h * w) / view.w;
  view.x = cx - ((cx - view.x) * w) / view.w;
  view.y = cy - ((cy - view.y) * h) / view.h;
  view.w = w;
  view.h = h;
  applyView();
}

/** Drawing units per screen pixel (the viewBox is fitted into the canvas, aspect kept). */
function unitsPerPixel(): number {
  const r = canvas.getBoundingClientRect();
  return Math.max(view.w / Math.max(1, r.width), view.h / Math.max(1, r.height));
}

function toDrawing(clientX: number, clientY: number): { x: number; y: number } {
  const p = svg.createSVGPoint();
  p.x = clientX;
  p.y = clientY;
  const m = svg.getScreenCTM();
  return m === null ? { x: 0, y: 0 } : p.matrixTransform(m.inverse());
}

/** A node's box in the drawing: its group's translation and its shape's size. */
function boxOf(g: SVGGElement): { x: number; y: number; w: number; h: number } {
  const m = g.transform.baseVal.consolidate()?.matrix;
  const b = g.getBBox();
  return { x: (m?.e ?? 0) + b.x, y: (m?.f ?? 0) + b.y, w: b.width, h: b.height };
}

/** Brings nodes into view, zooming in when the drawing is too small to read them. */
export function reveal(nodes: readonly SVGGElement[]): void {
  if (nodes.length === 0) return;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const g of nodes) {
    const b = boxOf(g);
    [x0, y0, x1, y1] = [Math.min(x0, b.x), Math.min(y0, b.y), Math.max(x1, b.x + b.w), Math.max(y1, b.y + b.h)];
  }
  const readable = unitsPerPixel() < 2.5;
  if (readable && x0 >= view.x && y0 >= view.y && x1 <= view.x + view.w && y1 <= view.y + view.h) return;
  // The nodes with a margin, at least as large as the canvas at one unit a pixel; the canvas's shape kept.
  const r = canvas.getBoundingClientRect();
  const pad = 60;
  let w = Math.max(x1 - x0 + 2 * pad, r.width);
  let h = Math.max(y1 - y0 + 2 * pad, r.height);
  if (w / h > r.width / Math.max(1, r.height)) h = (w * r.height) / Math.max(1, r.width);
  else w = (h * r.width) / Math.max(1, r.height);
  Object.assign(view, { x: (x0 + x1) / 2 - w / 2, y: (y0 + y1) / 2 - h / 2, w, h });
  applyView();
}

/** Whether the pointer is dragging the drawing (a click at the end of a drag is not a click). */
export const dragged = (): boolean => drag?.moved === true;

let drag: { x: number; y: number; vx: number; vy: number; moved: boolean } | undefined;
canvas.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
});
window.addEventListener("pointermove", (e) => {
  if (drag === undefined) return;
  const k = unitsPerPixel();
  const dx = e.clientX - drag.x;
  const dy = e.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < 4) return;
  drag.moved = true;
  canvas.classList.add("dragging");
  view.x = drag.vx - dx * k;
  view.y = drag.vy - dy * k;
  applyView();
});
window.addEventListener("pointerup", () => {
  canvas.classList.remove("dragging");
  // A drag is not a click: the click that follows it is ignored.
  if (drag?.moved === true) setTimeout(() => (drag = undefined), 0);
  else drag = undefined;
});
canvas.addEventListener(
  "wheel",
  (e) => {
    e.preventDefault();
    const p = toDrawing(e.clientX, e.clientY);
    zoom(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, p.x, p.y);
  },
  { passive: false },
);
for (const b of document.querySelectorAll<HTMLButtonElement>("[data-zoom]")) {
  b.addEventListener("click", () => {
    const how = b.dataset["zoom"];
    if (how === "in") zoom(ZOOM_STEP);
    else if (how === "out") zoom(1 / ZOOM_STEP);
    else fit();
  });
}
// Printed, the whole drawing at its own shape (the print style gives it the page's width); on screen again, fitted.
window.addEventListener("beforeprint", () => {
  Object.assign(view, full);
  applyView();
});
window.addEventListener("afterprint", fit);
