// `strata deploy` over TLS (--tls-ca, --tls-cert, --tls-key) onto strata's own server asking for
// client certificates: with ours it converges; without one, or in plain text, it is refused in one
// line (exit 1); half a certificate/key pair is a usage error (exit 2).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { loadTls } from "../../src/p4runtime/tls.js";
import { Certificates, noOpenssl } from "../p4runtime/certificates.js";
import { deploy, spec } from "./helpers.js";

const IP = spec("ip-router");
const UNREACHABLE = new RegExp(
  "^strata: deploy: r \\(127\\.0\\.0\\.1:\\d+\\): 127\\.0\\.0\\.1:\\d+: not reachable in 0\\.2 s \\(.*\\): " +
    "is the device up, and does it take plain text or TLS as given\\?\n$",
);

describe.skipIf(noOpenssl !== undefined)(
  `strata deploy over TLS${noOpenssl === undefined ? "" : ` (skipped: ${noOpenssl})`}`,
  () => {
    const certs = new Certificates();
    let server: P4RuntimeServer;
    let emulation: EngineEmulation;
    beforeAll(async () => {
      certs.make("ca");
      certs.make("server", { ca: "ca" });
      certs.make("client", { ca: "ca" });
      emulation = EngineEmulation.local(compile(loadSpec(IP)), false);
      const tls = loadTls({ cert: certs.at("server.pem"), key: certs.at("server.key"), ca: certs.at("ca.pem") });
      server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", empty: true, tls, warn: () => {} });
    });
    afterAll(async () => {
      await server.close(0);
      emulation.close();
      certs.remove();
    });

    it.each([
      {
        name: "our CA and client certificate: converged",
        flags: () => [
          "--tls-ca",
          certs.at("ca.pem"),
          "--tls-cert",
          certs.at("client.pem"),
          "--tls-key",
          certs.at("client.key"),
        ],
        code: 0,
        out: /^r \(127\.0\.0\.1:\d+ device 2\): pipeline set/,
        err: /^$/,
      },
      {
        name: "no client certificate: refused",
        flags: () => ["--tls-ca", certs.at("ca.pem")],
        code: 1,
        out: /^$/,
        err: UNREACHABLE,
      },
      {
        name: "plain text: refused",
        flags: () => [],
        code: 1,
        out: /^$/,
        err: UNREACHABLE,
      },
      {
        name: "a certificate without its key: a usage error",
        flags: () => ["--tls-ca", certs.at("ca.pem"), "--tls-cert", certs.at("client.pem")],
        code: 2,
        out: /^$/,
        err: /^strata: --tls-cert and --tls-key go together: our client certificate and its key\n$/,
      },
    ])("$name", async ({ flags, code, out, err }) => {
      // A device that refuses the connection is given 0.2 s: the connection is never made, however long it waits (a
      // longer wait is time spent on nothing; the line and exit code are the same).
      const timeout = code === 1 ? ["--timeout", "0.2"] : [];
      const r = await deploy([IP, "--target", `r=127.0.0.1:${server.port}`, ...flags(), ...timeout]);
      expect(r.err).toMatch(err);
      expect(r.out).toMatch(out);
      expect(r.code).toBe(code);
    });
  },
);
