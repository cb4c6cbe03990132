// The P4Runtime server over TLS (--tls-cert, --tls-key; with --tls-ca only clients with a
// certificate that CA signed), with certificates made here by openssl; the TLS files a user
// can get wrong, each one line naming the file; and the warning for a server that listens
// beyond loopback in plain text.

import { writeFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import type { TlsFlags } from "../../src/cli/p4runtime.js";
import { serve } from "../../src/cli/serve.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EngineEmulation } from "../../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../../src/p4runtime/server.js";
import { isLoopback, loadTls } from "../../src/p4runtime/tls.js";
import { Certificates, noOpenssl } from "./certificates.js";
import { Client } from "./client.js";
import { until } from "../helpers/wait.js";

const SPEC = "examples/ip-router/network.yaml";
const OK = 0,
  UNAVAILABLE = 14;

describe("isLoopback", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["localhost", true],
    ["LOCALHOST", true],
    ["::1", true],
    ["[::1]", true],
    ["[0:0:0:0:0:0:0:1]", true],
    ["[::ffff:127.0.0.1]", true],
    ["0.0.0.0", false],
    ["[::]", false],
    ["10.0.0.1", false],
    ["128.0.0.1", false],
    ["[::2]", false],
    ["switch.example", false],
  ])("%s: %s", (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });
});

describe.skipIf(noOpenssl !== undefined)(
  `TLS, with certificates made by openssl${noOpenssl !== undefined ? ` (skipped: ${noOpenssl})` : ""}`,
  () => {
    const certificates = new Certificates();
    const at = (name: string): string => certificates.at(name);
    const pem = (name: string): Buffer => certificates.pem(name);
    /** strata serve --p4runtime LISTEN with these TLS flags, in-process, stopped once it serves: its stderr. */
    const serveOnce = async (listen: string, files: TlsFlags): Promise<string> => {
      const io = memoryIo();
      const stop = new AbortController();
      let ended = false;
      const done = serve(SPEC, { port: [], hopLimit: 64, copyLimit: 4096, p4runtime: listen, ...files }, io, {
        signal: stop.signal,
      }).finally(() => (ended = true));
      // Serving, or ended before it (its exit code and stderr say why).
      await until(
        () => ended || io.stderr.text.includes("serving"),
        () => `never served: ${io.stderr.text}`,
      );
      stop.abort();
      expect(await done).toBe(0);
      return io.stderr.text;
    };
    let servers: P4RuntimeServer[] = [];

    beforeAll(() => {
      const make = certificates.make.bind(certificates);
      make("ca");
      make("other-ca");
      make("server", { ca: "ca" });
      make("client", { ca: "ca" });
      make("stranger", { ca: "other-ca" });
      make("old-ca", { dates: ["20000101000000Z", "20010101000000Z"] });
      make("old-server", { ca: "ca", dates: ["20000101000000Z", "20010101000000Z"] });
      make("future-server", { ca: "ca", dates: ["20900101000000Z", "20910101000000Z"] });
      // Self-signed, and not a CA's: a client that presents this very certificate.
      certificates.openssl(
        ...[
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          "self.key",
        ],
        ...["-out", "self.pem", "-days", "2", "-subj", "/CN=self", "-addext", "basicConstraints=critical,CA:FALSE"],
      );
      certificates.openssl("pkey", "-in", "server.key", "-aes256", "-passout", "pass:secret", "-out", "encrypted.key");
      writeFileSync(at("garbage.pem"), "not a certificate\n");
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.close(0)));
      certificates.remove();
    });

    const start = async (withCa: boolean): Promise<string> => {
      const tls = loadTls({ cert: at("server.pem"), key: at("server.key"), ...(withCa ? { ca: at("ca.pem") } : {}) });
      const server = await P4RuntimeServer.start(EngineEmulation.local(compile(loadSpec(SPEC))), {
        address: "127.0.0.1:0",
        empty: true,
        tls,
      });
      servers.push(server);
      return `127.0.0.1:${server.port}`;
    };
    const clients: Record<string, () => grpc.ChannelCredentials> = {
      "plain text": () => grpc.credentials.createInsecure(),
      "TLS, no certificate": () => grpc.credentials.createSsl(pem("ca.pem")),
      "TLS, a certificate the CA signed": () =>
        grpc.credentials.createSsl(pem("ca.pem"), pem("client.key"), pem("client.pem")),
      "TLS, a certificate another CA signed": () =>
        grpc.credentials.createSsl(pem("ca.pem"), pem("stranger.key"), pem("stranger.pem")),
      "TLS, trusting another CA": () => grpc.credentials.createSsl(pem("other-ca.pem")),
    };

    it.each([
      { server: "--tls-cert, --tls-key", ca: false, client: "plain text", code: UNAVAILABLE },
      { server: "--tls-cert, --tls-key", ca: false, client: "TLS, no certificate", code: OK },
      { server: "--tls-cert, --tls-key", ca: false, client: "TLS, a certificate the CA signed", code: OK },
      { server: "--tls-cert, --tls-key", ca: false, client: "TLS, trusting another CA", code: UNAVAILABLE },
      { server: "--tls-cert, --tls-key, --tls-ca", ca: true, client: "plain text", code: UNAVAILABLE },
      { server: "--tls-cert, --tls-key, --tls-ca", ca: true, client: "TLS, no certificate", code: UNAVAILABLE },
      { server: "--tls-cert, --tls-key, --tls-ca", ca: true, client: "TLS, a certificate the CA signed", code: OK },
      {
        server: "--tls-cert, --tls-key, --tls-ca",
        ca: true,
        client: "TLS, a certificate another CA signed",
        code: UNAVAILABLE,
      },
    ])("server with $server, client with $client: $code", async ({ ca, client, code }) => {
      const c = new Client(await start(ca), clients[client]?.());
      try {
        const got = await c.unary("capabilities", {}).then(
          () => OK,
          (e: { code: number }) => e.code,
        );
        expect(got).toBe(code);
      } finally {
        c.close();
      }
    });

    it(
      "strata serve --p4runtime with TLS: the line says so, and a client with " + "the CA's certificate is served",
      async () => {
        const io = memoryIo();
        const stop = new AbortController();
        const done = serve(
          SPEC,
          {
            port: [],
            hopLimit: 64,
            copyLimit: 4096,
            p4runtime: "127.0.0.1:0",
            tlsCert: at("server.pem"),
            tlsKey: at("server.key"),
            tlsCa: at("ca.pem"),
          },
          io,
          { signal: stop.signal },
        );
        try {
          const m = await until(
            () =>
              /P4Runtime server on 127\.0\.0\.1:(\d+) over TLS with client certificates: devices/.exec(io.stderr.text),
            () => `never served: ${io.stderr.text}`,
          );
          const c = new Client(`127.0.0.1:${m?.[1] ?? ""}`, clients["TLS, a certificate the CA signed"]?.());
          expect((await c.unary("capabilities", {})).p4runtimeApiVersion).toBe("1.4.0");
          c.close();
        } finally {
          stop.abort();
        }
        expect(await done).toBe(0);
      },
    );

    describe("a TLS file or flag that cannot do: one line naming it, exit 2", () => {
      const cases = [
        {
          problem: "a cert file that is not there",
          flags: () => ["--tls-cert", at("nope.pem"), "--tls-key", at("server.key")],
          line: () => `${at("nope.pem")}: cannot read the --tls-cert file: no such file\n`,
        },
        {
          problem: "a key as the certificate",
          flags: () => ["--tls-cert", at("server.key"), "--tls-key", at("server.key")],
          line: () =>
            `${at("server.key")}: no PEM certificate in it (--tls-cert takes the server's certificate, ` +
            `and its chain if any, in PEM: -----BEGIN CERTIFICATE----- …)\n`,
        },
        {
          problem: "a certificate as the key",
          flags: () => ["--tls-cert", at("server.pem"), "--tls-key", at("server.pem")],
          line: () => `${at("server.pem")}: not a PEM private key: `,
        },
        {
          problem: "the key of another certificate",
          flags: () => ["--tls-cert", at("server.pem"), "--tls-key", at("client.key")],
          line: () =>
            `${at("client.key")}: not the key of the certificate in ${at("server.pem")} (CN=server) (give the ` +
            `key the certificate was made for)\n`,
        },
        {
          problem: "an encrypted key",
          flags: () => ["--tls-cert", at("server.pem"), "--tls-key", at("encrypted.key")],
          line: () => `${at("encrypted.key")}: the key is encrypted (give it unencrypted`,
        },
        {
          problem: "a CA file with no certificate",
          flags: () => ["--tls-cert", at("server.pem"), "--tls-key", at("server.key"), "--tls-ca", at("garbage.pem")],
          line: () => `${at("garbage.pem")}: no PEM certificate in it (--tls-ca takes`,
        },
        {
          problem: "a client's certificate as the CA",
          flags: () => ["--tls-cert", at("server.pem"), "--tls-key", at("server.key"), "--tls-ca", at("client.pem")],
          line: () =>
            `${at("client.pem")}: certificate 1: CN=client is not a CA's certificate: it cannot sign a client's ` +
            `certificate (--tls-ca takes the certificates of the CAs that sign the clients' certificates, not a ` +
            `client's own)\n`,
        },
        {
          problem: "--tls-cert alone",
          flags: () => ["--tls-cert", at("server.pem")],
          line: () => "--tls-cert needs its private key: give --tls-key FILE too\n",
        },
        {
          problem: "--tls-key alone",
          flags: () => ["--tls-key", at("server.key")],
          line: () => "--tls-key is the key of a --tls-cert certificate: give --tls-cert FILE too\n",
        },
        {
          problem: "--tls-ca alone",
          flags: () => ["--tls-ca", at("ca.pem")],
          line: () => "--tls-ca checks the clients' certificates over TLS: give --tls-cert and --tls-key too\n",
        },
      ];
      it.each(cases.flatMap((c) => ["p4runtime", "serve"].map((command) => ({ command, ...c }))))(
        "strata $command: $problem",
        async ({ command, flags, line }) => {
          const io = memoryIo();
          const listen = command === "p4runtime" ? ["--listen", "127.0.0.1:0"] : ["--p4runtime", "127.0.0.1:0"];
          expect(await main([command, SPEC, ...listen, ...flags()], io)).toBe(2);
          expect(io.stderr.text.startsWith(`strata: ${line()}`), io.stderr.text).toBe(true);
          expect(io.stderr.text.split("\n")).toHaveLength(2);
        },
      );

      it.each(["--tls-cert", "--tls-key", "--tls-ca"])("strata serve %s without --p4runtime", async (flag) => {
        const io = memoryIo();
        expect(await main(["serve", SPEC, flag, at("ca.pem")], io)).toBe(2);
        expect(io.stderr.text).toBe(`strata: ${flag} secures the P4Runtime server: give --p4runtime HOST:PORT too\n`);
      });
    });

    describe("a certificate outside its dates: a warning line, and the server runs", () => {
      const warning = (file: string, subject: string, problem: string, then: string): string =>
        `strata: warning: ${at(file)}: certificate 1: CN=${subject} ${problem} (${then}: renew it, or check this ` +
        `machine's clock)`;
      const server = "clients that check it refuse the server";
      const client = "a client whose certificate it signed is refused";
      it.each([
        { name: "all within their dates", cert: "server", ca: "ca", warnings: () => [] },
        {
          name: "an expired server certificate",
          cert: "old-server",
          ca: "ca",
          warnings: () => [warning("old-server.pem", "old-server", "expired on 2001-01-01T00:00:00Z", server)],
        },
        {
          name: "a server certificate not valid yet",
          cert: "future-server",
          ca: "ca",
          warnings: () => [
            warning("future-server.pem", "future-server", "is not valid before 2090-01-01T00:00:00Z", server),
          ],
        },
        {
          name: "an expired CA",
          cert: "server",
          ca: "old-ca",
          warnings: () => [warning("old-ca.pem", "old-ca", "expired on 2001-01-01T00:00:00Z", client)],
        },
        {
          name: "a self-signed certificate that is not a CA's, as the CA: it admits a client that presents it",
          cert: "server",
          ca: "self",
          warnings: () => [],
        },
      ])("$name", ({ cert, ca, warnings }) => {
        const lines: string[] = [];
        loadTls({ cert: at(`${cert}.pem`), key: at(`${cert}.key`), ca: at(`${ca}.pem`) }, (line) => lines.push(line));
        expect(lines).toEqual(warnings());
      });

      it("strata serve --p4runtime says it on stderr, before the server's line", async () => {
        const stderr = await serveOnce("127.0.0.1:0", { tlsCert: at("old-server.pem"), tlsKey: at("old-server.key") });
        const lines = stderr.split("\n");
        expect(lines[0]).toBe(warning("old-server.pem", "old-server", "expired on 2001-01-01T00:00:00Z", server));
        expect(lines[1]).toMatch(/^P4Runtime server on 127\.0\.0\.1:\d+ over TLS: devices/);
      });
    });

    it.each([
      { listen: "0.0.0.0:0", tls: false, warned: true },
      { listen: "0.0.0.0:0", tls: true, warned: false },
      { listen: "127.0.0.1:0", tls: false, warned: false },
      { listen: "localhost:0", tls: false, warned: false },
    ])("listening on $listen, TLS $tls: a warning line on stderr: $warned", async ({ listen, tls, warned }) => {
      const stderr = await serveOnce(listen, tls ? { tlsCert: at("server.pem"), tlsKey: at("server.key") } : {});
      const warning =
        `strata: warning: --p4runtime ${listen}: no TLS beyond loopback: anyone who reaches this ` +
        `address can become primary, write the tables and send packets from the emulated members (give ` +
        `--tls-cert, --tls-key and --tls-ca, or listen on 127.0.0.1)\n`;
      expect(stderr.includes(warning), stderr).toBe(warned);
    });
  },
);
