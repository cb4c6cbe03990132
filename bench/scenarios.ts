// Every benchmark scenario, in the order `npm run bench` runs them. Add new ones here.

import { analyzeFatTree, analyzeGrowth, analyzeUpdate } from "./analysis.js";
import { analyzeFib, analyzeFibUpdate } from "./analysis-fib.js";
import { analyzeAclCurve, analyzeEdgeRouter } from "./analysis-scale.js";
import { loadFib } from "./load-scale.js";
import { analyzeLeafSpine } from "./analysis-leaf-spine.js";
import {
  fatTree,
  hubAndSpoke8,
  l2Exact,
  l2Exact64k,
  replayFile,
  replayFile2w,
  routerLayered,
  vxlan,
} from "./dataplane.js";
import { p4runtime } from "./p4runtime.js";
import { replayScaling } from "./replay.js";
import { pcapRead, pcapngRead } from "./pcap-read.js";
import { BMV2_CPU, BMV2_SCENARIOS } from "./bmv2.js";
import { deploy } from "./deploy.js";
import { serveReload } from "./serve-reload.js";
import { intentsFailure, intentsFatTree } from "./intents.js";
import { apiWriteFatTree } from "./api-write.js";
import { controllerRoundTrip } from "./controller.js";
import { queueReplay } from "./queue.js";
import type { FigureScenario, Scenario } from "./scenario.js";

export const SCENARIOS: readonly (Scenario | FigureScenario)[] = [
  pcapRead,
  pcapngRead,
  l2Exact,
  l2Exact64k,
  hubAndSpoke8,
  routerLayered,
  vxlan,
  fatTree,
  replayFile,
  replayFile2w,
  replayScaling,
  queueReplay,
  p4runtime,
  ...BMV2_SCENARIOS,
  BMV2_CPU,
  analyzeFatTree,
  analyzeGrowth,
  analyzeUpdate,
  analyzeAclCurve,
  analyzeEdgeRouter,
  loadFib,
  analyzeFib,
  analyzeFibUpdate,
  analyzeLeafSpine,
  serveReload,
  deploy,
  intentsFatTree,
  intentsFailure,
  apiWriteFatTree,
  controllerRoundTrip,
];
