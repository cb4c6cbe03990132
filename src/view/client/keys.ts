// The keys: find (/), move through packets and steps (arrows), zoom, pan, clear (Esc), help (?).

import { byId } from "./dom.js";
import { applyView, fit, view, zoom, ZOOM_STEP } from "./drawing.js";
import { select } from "./details.js";
import { chosen, choose, filterInput, list, matches, runSearch } from "./list.js";
import { trace } from "./packets.js";
import { clearPath, current, goToStep } from "./path.js";

const help = byId("help");
byId("help-button").addEventListener("click", () => (help.hidden = !help.hidden));

window.addEventListener("keydown", (e) => {
  const typing = e.target === filterInput;
  if (e.key === "Escape") {
    clearPath();
    select(undefined);
    help.hidden = true;
    if (typing) filterInput.blur();
    return;
  }
  if (typing) {
    if (e.key === "Enter") {
      e.preventDefault();
      runSearch();
      if (matches.length > 0) {
        choose(0);
        list.focus();
      }
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      list.focus();
      choose(Math.max(0, chosen));
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const pan = (dx: number, dy: number): void => {
    view.x += dx * view.w * 0.1;
    view.y += dy * view.h * 0.1;
    applyView();
  };
  switch (e.key) {
    case "/":
      if (trace !== undefined) {
        e.preventDefault();
        filterInput.focus();
        filterInput.select();
      }
      return;
    case "?":
      help.hidden = !help.hidden;
      return;
    case "+":
    case "=":
      zoom(ZOOM_STEP);
      return;
    case "-":
      zoom(1 / ZOOM_STEP);
      return;
    case "0":
      fit();
      return;
  }
  if (e.shiftKey && e.key.startsWith("Arrow")) {
    e.preventDefault();
    pan(
      e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : 0,
      e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0,
    );
    return;
  }
  if (trace === undefined) return;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    choose(Math.max(0, chosen + (e.key === "ArrowDown" ? 1 : -1)));
  } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    e.preventDefault();
    if (current !== undefined) goToStep(current.at + (e.key === "ArrowRight" ? 1 : -1));
  }
});
