// `npm run bench:view [-- --dir DIR] [-- --packets N]`: strata view at scale. Writes the bench's
// fat-tree (./dataplane.ts: 1,169 members) and captures of N frames (100,000 by default) sent
// by one host of each pod to hosts of other pods (1 in 100 to nobody: dropped at the core),
// replays them with a trace, writes the page, and opens it in chromium: how long strata run
// and strata view take, and in the browser the first paint, the page's script ready, and a
// packet's path drawn (clicked in the list; found by number, then drawn), each the median of
// five openings of the page. The goal is under a second for each figure in the browser. The
// files stay in DIR (a new one under the system's temporary directory by default) to be opened
// by hand.
//
// `npm run bench:view -- --hub N,N,…`: instead, how strata view's cost grows with members: for
// each N, the bench's hub of N spokes (./dataplane.ts hubSpec), drawn by `strata view --out`
// in a process of its own (its time and peak RSS), and laid out alone (layOut's time).

import { positive, readFlags, refuse } from "./args.js";

/** The most packets: ten times the default; the captures are made in memory and the page holds every packet. */
const PACKETS_MOST = 1_000_000;
/** The most spokes --hub draws: five times the largest the issue asks for. */
const HUB_MOST = 100_000;

async function benchView(): Promise<void> {
  const usage = "npm run bench:view [-- --packets N] [-- --dir DIR] | npm run bench:view -- --hub N,N,… [-- --dir DIR]";
  const flags = readFlags({
    options: { dir: { type: "string" }, packets: { type: "string", default: "100000" }, hub: { type: "string" } },
  });
  if (typeof flags === "string") return refuse("bench:view", flags, usage);
  const { values } = flags;
  const packets = positive("--packets", values.packets, PACKETS_MOST, true);
  if (typeof packets === "string") return refuse("bench:view", packets, usage);
  const hubs = (values.hub === undefined ? [] : values.hub.split(",")).map((v) => positive("--hub", v, HUB_MOST, true));
  const wrong = hubs.find((h) => typeof h === "string");
  if (wrong !== undefined) return refuse("bench:view", wrong, usage);
  const { viewBench } = await import("./view-run.js");
  await viewBench(values.dir, packets, hubs as number[]);
}

await benchView();
