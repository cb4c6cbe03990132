// tsc does not keep the executable bit; npm links the bin, but a direct run needs it.
import { chmodSync } from "node:fs";
for (const bin of ["../dist/bin/strata.js", "../dist/src/cli/main.js"]) chmodSync(new URL(bin, import.meta.url), 0o755);
