// Where a P4Runtime server listens (`strata p4runtime --listen`, `strata serve --p4runtime`): checked
// when the flag is read, so a bad address is refused before the command loads gRPC.

import { UsageError } from "../errors.js";

/** HOST:PORT as gRPC binds it; a bad one is a usage error naming `flag`. */
export function listenAddress(flag: string): (text: string) => string {
  return (text) => {
    const m = /^(.+):(\d{1,5})$/.exec(text);
    const port = m === null ? -1 : Number(m[2]);
    if (m === null || port > 65535)
      throw new UsageError(`${flag} '${text}': write HOST:PORT, e.g. 127.0.0.1:9559 (port 0: any free port)`);
    return text;
  };
}
