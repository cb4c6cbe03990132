// Every benchmark scenario, in the order `npm run bench` runs them. Add new ones here.

import { pcapRead, pcapngRead } from "./pcap-read.js";
import type { Scenario } from "./scenario.js";

export const SCENARIOS: readonly Scenario[] = [pcapRead, pcapngRead];
