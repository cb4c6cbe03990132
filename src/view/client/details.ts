// A member's or a link's details, shown when it is clicked or chosen with the keyboard.

import { byId, data, el, svg } from "./dom.js";
import { dragged, linkEls, nodeEls } from "./drawing.js";
import { search } from "./list.js";
import { trace } from "./packets.js";

const details = byId("details");
let selected: Element | undefined;

function facts(pairs: readonly (readonly [string, string | Node])[]): HTMLDListElement {
  const dl = el("dl", { class: "facts" });
  for (const [k, v] of pairs) dl.append(el("dt", {}, k), el("dd", {}, v));
  return dl;
}

export function select(g: SVGGElement | undefined): void {
  selected?.classList.remove("selected");
  selected = g;
  g?.classList.add("selected");
}

function showNode(id: string): void {
  const n = data.nodes[id];
  const g = nodeEls.get(id);
  if (n === undefined || g === undefined) return;
  select(g);
  details.replaceChildren();
  if (n.kind !== "member") {
    details.append(
      el("h2", {}, n.kind === "external" ? `external end ${n.label}` : `group ${n.label}`),
      facts([["network", n.network]]),
    );
    return;
  }
  const member = n.member ?? "";
  const sameMachine = Object.values(data.nodes).filter(
    (o) => o.kind === "member" && o.machine === n.machine && o.member !== member,
  );
  details.append(
    el("h2", {}, member),
    facts([
      ["network", `${n.network} (${data.networks.find((w) => w.name === n.network)?.design ?? ""})`],
      ["name", n.name ?? ""],
      ["role", n.role ?? ""],
      [
        "machine",
        `${n.machine ?? ""}${sameMachine.length === 0 ? "" : `, with ${sameMachine.map((o) => o.member).join(", ")}`}`,
      ],
    ]),
  );
  const run = data.run;
  if (run === undefined) return;
  const got = run.members[member];
  const drops = Object.entries(got?.drops ?? {});
  details.append(
    facts([
      ["delivered", String(got?.delivered ?? 0)],
      ["dropped", drops.length === 0 ? "0" : drops.map(([reason, n]) => `${n} ${reason}`).join(", ")],
    ]),
  );
  const rows = run.rows.filter((r) => r.member === member);
  if (rows.length > 0) {
    const table = el("table", { class: "rows" });
    for (const r of rows)
      table.append(
        el(
          "tr",
          {},
          el("td", {}, r.table),
          el("td", {}, `row ${r.row}`),
          el("td", {}, r.rule),
          el("td", {}, `${r.hits} hits`),
          el("td", { class: "origin" }, r.origin ?? ""),
        ),
      );
    details.append(el("h2", {}, "rows that matched"), table);
  }
  if (trace !== undefined) {
    const find = el("button", { type: "button" }, `find packets at ${member}`);
    find.addEventListener("click", () => search(`at ${member}`));
    details.append(find);
  }
}

function showLink(capture: string): void {
  const l = data.links[capture];
  const g = linkEls.get(capture);
  if (l === undefined || g === undefined) return;
  select(g);
  const how = [
    l.kind === "virtual" ? `virtual: implemented by session ${l.sessions.join(", ")}` : l.kind,
    ...(l.bridging ? ["bridging two networks"] : []),
    ...(l.shared !== undefined ? [`shared with ${l.shared} (subduction)`] : []),
  ].join("; ");
  details.replaceChildren(
    el("h2", {}, capture),
    facts([
      ["network", l.network],
      ["mode", `${l.mode}${l.group === undefined ? "" : `, group ${l.group}`}`],
      ["kind", how],
      ...(l.external !== undefined ? [["external end", l.external] as const] : []),
    ]),
  );
  const run = data.run;
  if (run === undefined) return;
  const got = run.links[capture];
  details.append(
    facts([
      [
        "carried",
        got === undefined ? "nothing" : `${got.packets} packets, ${got.bytes} bytes (${run.dir}/links/${capture}.pcap)`,
      ],
    ]),
  );
  if (trace !== undefined) {
    const find = el("button", { type: "button" }, `find packets via ${capture}`);
    find.addEventListener("click", () => search(`via ${capture}`));
    details.append(find);
  }
}

function activate(target: EventTarget | null): boolean {
  const t = target instanceof Element ? target : null;
  const node = t?.closest<SVGGElement>("g.node");
  if (node != null) {
    showNode(node.dataset["node"] ?? "");
    return true;
  }
  const link = t?.closest<SVGGElement>("g.link");
  if (link != null) {
    showLink(link.dataset["link"] ?? "");
    return true;
  }
  return false;
}

svg.addEventListener("click", (e) => {
  if (dragged()) return;
  if (!activate(e.target)) {
    select(undefined);
  }
});
svg.addEventListener("keydown", (e) => {
  if (e.key === "Enter" || e.key === " ") {
    if (activate(e.target)) e.preventDefault();
  }
});
