#!/usr/bin/env node
// The `strata` bin: src/cli's commands, and `strata bench` from bench/. The bench stands above the
// code it measures (it imports src/, never the other way round), so its command joins here.

import { registerBench } from "../bench/command.js";
import { runProcess } from "../src/cli/main.js";

runProcess([registerBench]);
