// Every benchmark scenario, in the order `npm run bench` runs them. Add new ones here.

import { fatTree, hubAndSpoke8, l2Exact, l2Exact64k, replayFile, replayFile2w, routerLayered, vxlan } from "./dataplane.js";
import { pcapRead, pcapngRead } from "./pcap-read.js";
import type { Scenario } from "./scenario.js";
import { BMV2_SCENARIOS } from "./bmv2.js";

export const SCENARIOS: readonly Scenario[] = [pcapRead, pcapngRead, l2Exact, l2Exact64k, hubAndSpoke8, routerLayered, vxlan, fatTree, replayFile, replayFile2w, ...BMV2_SCENARIOS];
