// The rows of shared members (subduction, seed §5.3.2), checked once the shared
// links are known (./bridging.ts resolves which members share them):
//
// - `do: shared` (SharedAcquire) hands a packet that arrived on a shared link to
//   the overlay's shared member: only the underlay's shared member writes it,
//   on a row whose `in` is a shared link;
// - `out: shared` (SharedForward) hands the packet to the underlay's shared
//   member: only the overlay's shared member writes it;
// - the underlay's forward rows for such packets (`in: shared`) must send them
//   onto shared links, as the overlay could have done itself; so the underlay's
//   shared member names the in-link of every forward row (a row for any in-link
//   would take handed-over packets too).
//
// In a network whose links are not all known (a shared link was refused, and
// reported), which members share a link is not known either: only what is
// wrong whatever the links are is reported there.

import type { Problems } from "./problems.js";
import type { NetworkSpec, RowSpec } from "./types.js";

export function checkSharedRows(
  problems: Problems,
  networks: readonly NetworkSpec[],
  known: (network: string) => boolean,
): void {
  /** "net.member" → the identifiers of its shared links, for the underlay's and the overlay's shared member. */
  const underlay = new Map<string, Set<number>>();
  const overlay = new Map<string, Set<number>>();
  for (const net of networks) {
    for (const l of net.links) {
      if (l.sharedAt === undefined || l.shared === undefined) continue;
      const ends = [...("external" in l.from ? [] : [l.from]), ...(Array.isArray(l.to) ? l.to : [])];
      const ident = ends.find((e) => e.member === l.sharedAt?.member)?.ident;
      if (ident === undefined) continue;
      const add = (map: Map<string, Set<number>>, key: string): void => {
        map.set(key, (map.get(key) ?? new Set()).add(ident));
      };
      add(underlay, `${net.name}.${l.sharedAt.member}`);
      add(overlay, `${l.shared}.${l.sharedAt.partner}`);
    }
  }
  for (const net of networks) {
    for (const [key, tables] of net.tables) {
      const who = `${net.name}.${key}`;
      const sharedIn = underlay.get(who);
      const list = (ids: ReadonlySet<number> | undefined): string => [...(ids ?? [])].sort((a, b) => a - b).join(", ");
      const sure = known(net.name);
      for (const row of tables.acquire?.rows ?? []) {
        if (row.in === "shared")
          problems.addRef(
            row.at,
            "in: shared is for forward rows: packets a shared member hands over (SharedForward)",
            "in an acquire row, name the link the packet arrives on",
          );
        if (row.action.kind !== "shared-acquire" || !sure) continue;
        if (sharedIn === undefined) {
          problems.addRef(
            row.at,
            `${who} shares no link: do: shared hands a packet to the overlay's shared member`,
            "declare the link in this network with shared: OVERLAY, or acquire the packet here",
          );
        } else if (typeof row.in !== "number" || !sharedIn.has(row.in)) {
          problems.addRef(
            row.at,
            "do: shared applies to packets arriving on a shared link",
            `write in: ${list(sharedIn)} (the shared links of ${key})`,
          );
        }
      }
      for (const row of tables.forward?.rows ?? []) {
        if (row.action.kind === "shared-forward" && sure && !overlay.has(who)) {
          problems.addRef(
            row.at,
            `${who} is not the overlay's shared member of any shared link: out: shared hands the packet to the ` +
              `underlay's shared member`,
            "only the overlay member of a shared pair writes out: shared",
          );
        }
        if (row.in === "shared" && sure) checkHandedOver(problems, row, who, sharedIn, list(sharedIn));
        // Without `in`, the row would also take handed-over packets and could send them anywhere.
        if (row.in === undefined && sharedIn !== undefined) {
          problems.addRef(
            row.at,
            `${who} shares a link, so its forward rows name their in-link: without one, this row would also take ` +
              `packets the overlay hands over (in: shared), which must leave on a shared link`,
            "add in: to this row (in: shared for handed-over packets)",
          );
        }
      }
    }
  }
}

/** A forward row for packets handed over by the overlay: it must send them onto shared links. */
function checkHandedOver(
  problems: Problems,
  row: RowSpec,
  who: string,
  shared: ReadonlySet<number> | undefined,
  list: string,
): void {
  if (shared === undefined) {
    problems.addRef(
      row.at,
      `${who} shares no link: nothing is handed to it with in: shared`,
      "remove the row, or declare a shared link",
    );
    return;
  }
  const a = row.action;
  if (a.kind === "out" && a.outLinks.some((p) => !shared.has(p))) {
    problems.addRef(
      row.at,
      "a packet handed over by the overlay (in: shared) must leave on a shared link, as the overlay could have sent it",
      `out: ${list}`,
    );
  }
  if (a.kind === "shared-forward") problems.addRef(row.at, "out: shared would hand the packet back", `out: ${list}`);
}
