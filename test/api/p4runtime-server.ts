// strata's own P4Runtime server on a description, in this process, with the description's rows installed (as
// `strata p4runtime SPEC --listen 127.0.0.1:0` starts it), for the tests of the library's P4RuntimeDevice.

import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";

export interface Served {
  readonly address: string;
  close(): Promise<void>;
}

export async function serve(spec: string): Promise<Served> {
  const emulation = EngineEmulation.local(compile(loadSpec(spec)), false);
  const server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", warn: () => {} });
  return {
    address: `127.0.0.1:${server.port}`,
    close: async () => {
      await server.close(0);
      emulation.close();
    },
  };
}
