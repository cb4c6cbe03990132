// How strata serve's port processes open interfaces (--port-backend): `cap`, a node process
// (port-helper.ts) with the npm package cap (libpcap), on every system libpcap runs on; or
// `packet`, the native port process (native/port-helper.c, built by npm run build into
// build/strata-port-helper where there is a C compiler), Linux only: AF_PACKET sockets with a
// TPACKET_V3 ring, frames read a block at a time and sent with sendmmsg. Both speak the records of
// port-records.ts; `packet` costs a fraction of cap's CPU a frame (docs/cli.md, "Faster").

import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.js";

/** The part of cap's API strata uses (cap has no type definitions). */
export interface CapHandle {
  open(device: string, filter: string, bufSize: number, buffer: Buffer): string;
  send(buffer: Buffer, nBytes?: number): void;
  close(): void;
  on(event: "packet", listener: (nbytes: number, truncated: boolean) => void): void;
  removeAllListeners(event?: string): void;
}

export interface CapModule {
  Cap: { new (): CapHandle; deviceList(): { name: string }[] };
}

/** How to get cap, for the one line --port prints without it. */
export const CAP_INSTALL =
  "install libpcap's headers and the optional package cap: apt-get install libpcap-dev (Debian) and npm install cap";

/** cap, or undefined when it is not installed or did not build (then its error). */
export function loadCap(): { cap: CapModule } | { cap: undefined; error: string } {
  try {
    const require = createRequire(import.meta.url);
    return { cap: require("cap") as CapModule };
  } catch (err) {
    return { cap: undefined, error: err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err) };
  }
}

export const PORT_BACKENDS = ["cap", "packet"] as const;
export type PortBackendName = (typeof PORT_BACKENDS)[number];

/** What opens the interfaces: cap loaded, or the native port process's path. */
export type PortBackend =
  { readonly name: "cap"; readonly cap: CapModule } | { readonly name: "packet"; readonly helper: string };

/** Where a file of the package is: from dist/src/serve/ (built) or src/serve/ (tests), `rel` from the package root. */
function packageFile(rel: string): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const up = here.includes(`${sep}dist${sep}src${sep}serve${sep}`) ? "../../../" : "../../";
  return fileURLToPath(new URL(`${up}${rel}`, import.meta.url));
}

/** The native port process, when built and on Linux (the only system it is built for). */
export function nativeHelper(): string | undefined {
  if (process.platform !== "linux") return undefined;
  const path = packageFile("build/strata-port-helper");
  return existsSync(path) ? path : undefined;
}

/** Where the cap port process's script is: beside this file once built (dist/), or the built copy when run from src/
 * (tests). */
function capHelperScript(): string {
  const here = fileURLToPath(new URL("./port-helper.js", import.meta.url));
  if (existsSync(here)) return here;
  return here.replace(`${sep}src${sep}serve${sep}`, `${sep}dist${sep}src${sep}serve${sep}`);
}

/**
 * The backend --port-backend asks for (`packet` by default where it is built, else `cap`); UsageError with how to get
 * it when it is not there.
 */
export function chooseBackend(asked: PortBackendName | undefined): PortBackend {
  const helper = nativeHelper();
  if (asked !== "cap" && helper !== undefined) return { name: "packet", helper };
  if (asked === "packet")
    throw new UsageError(
      process.platform === "linux"
        ? "--port-backend packet needs build/strata-port-helper, which is not built (npm run build with a C " +
            "compiler: apt-get install gcc), or --port-backend cap"
        : `--port-backend packet runs on Linux only (this is ${process.platform}): use --port-backend cap`,
    );
  const loaded = loadCap();
  if (loaded.cap === undefined)
    throw new UsageError(`--port needs the package cap, which is not installed or did not build: ${CAP_INSTALL}`);
  return { name: "cap", cap: loaded.cap };
}

/** The interfaces there are: libpcap's list, or Linux's (/sys/class/net). */
export function interfaceNames(backend: PortBackend): string[] {
  if (backend.name === "packet") return readdirSync("/sys/class/net");
  return backend.cap.Cap.deviceList().map((d) => d.name);
}

/** The command that starts a port process: the ports' capture buffer (bytes), then INDEX=IFACE. */
export function portCommand(backend: PortBackend, buffer: number, index: number, iface: string): [string, string[]] {
  const args = [String(buffer), `${index}=${iface}`];
  return backend.name === "packet" ? [backend.helper, args] : [process.execPath, [capHelperScript(), ...args]];
}
