// X.509 certificates for the TLS tests, made by openssl in a directory of their own: CAs,
// certificates they sign for localhost and 127.0.0.1, and ones valid only in the past or
// the future (through `openssl ca`, which takes dates where openssl 3.0's `x509` takes only
// a number of days).

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why the certificates cannot be made here, if they cannot: the TLS tests are skipped and say so. */
export const noOpenssl =
  spawnSync("openssl", ["version"]).status === 0
    ? undefined
    : "openssl is not on PATH, and the certificates are made with it";

/** `openssl ca`'s configuration: only what it needs to sign with the dates given. */
const CA_CONFIG = `[ca]
default_ca = signing
[signing]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
`;

export interface Made {
  /** The CA that signs it; none: a CA's own certificate, self-signed. */
  readonly ca?: string;
  /** Valid from and to, as openssl writes dates (YYYYMMDDHHMMSSZ); otherwise from now for 2 days. */
  readonly dates?: readonly [string, string];
}

export class Certificates {
  readonly dir = mkdtempSync(join(tmpdir(), "strata-tls-"));

  at(name: string): string {
    return join(this.dir, name);
  }

  /** Removes the directory and everything made in it. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  pem(name: string): Buffer {
    return readFileSync(this.at(name));
  }

  openssl(...args: string[]): void {
    execFileSync("openssl", args, { cwd: this.dir, stdio: "pipe" });
  }

  /** NAME.key and NAME.pem: a CA's own certificate, or one `ca` signs for localhost and 127.0.0.1. */
  make(name: string, made: Made = {}): void {
    const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${name}.key`];
    const { ca, dates } = made;
    if (dates === undefined && ca === undefined)
      return this.openssl("req", "-x509", ...key, "-out", `${name}.pem`, "-days", "2", "-subj", `/CN=${name}`);
    this.openssl("req", ...key, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    writeFileSync(
      this.at(`${name}.ext`),
      ca === undefined ? "basicConstraints=critical,CA:TRUE\n" : "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    );
    if (dates === undefined) {
      this.openssl(
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${ca}.pem`,
        "-CAkey",
        `${ca}.key`,
        "-set_serial",
        String(Date.now()),
        "-out",
        `${name}.pem`,
        "-days",
        "2",
        "-extfile",
        `${name}.ext`,
      );
      return;
    }
    writeFileSync(this.at("ca.cnf"), CA_CONFIG);
    writeFileSync(this.at("index.txt"), "", { flag: "a" });
    writeFileSync(this.at("serial"), `${Date.now().toString(16).padStart(16, "0")}\n`);
    const signer =
      ca === undefined ? ["-selfsign", "-keyfile", `${name}.key`] : ["-cert", `${ca}.pem`, "-keyfile", `${ca}.key`];
    this.openssl(
      "ca",
      "-batch",
      "-config",
      "ca.cnf",
      ...signer,
      "-in",
      `${name}.csr`,
      "-out",
      `${name}.pem`,
      "-startdate",
      dates[0],
      "-enddate",
      dates[1],
      "-extfile",
      `${name}.ext`,
      "-notext",
    );
  }
}
