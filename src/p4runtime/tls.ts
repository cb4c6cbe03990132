// TLS for the P4Runtime server: the PEM files of --tls-cert, --tls-key and --tls-ca, read and
// checked before the server starts, so that a bad one is strata's one line naming the file
// (gRPC would take a CA file with no certificate in it, and fail on the others only when it
// binds); and whether a listen address stays on this machine.

import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { describeIoError, excerpt, InputError } from "../errors.js";

/** The server's certificate and key, and the CA that signs the clients' certificates (with it, a client must present
 * one). */
export interface Tls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
}

export interface TlsFiles {
  /** The server's certificate, PEM (a chain: the server's first). */
  readonly cert: string;
  /** Its private key, PEM, not encrypted. */
  readonly key: string;
  /** Certificates of the CAs whose clients are admitted, PEM. */
  readonly ca?: string;
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

function read(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InputError(file, "", `cannot read the ${flag} file: ${describeIoError(e)}`);
  }
}

/** The certificates of a PEM file, each parsed; none, or one that does not parse, is an InputError naming the file. */
function certificates(file: string, pem: Buffer, flag: string, what: string): X509Certificate[] {
  const blocks = pem.toString("latin1").match(CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw new InputError(
      file,
      "",
      "no PEM certificate in it",
      `${flag} takes ${what} in PEM: -----BEGIN CERTIFICATE----- …`,
    );
  return blocks.map((block, k) => {
    try {
      return new X509Certificate(block);
    } catch (e) {
      throw new InputError(
        file,
        `certificate ${k + 1}`,
        `it does not parse: ${excerpt(e instanceof Error ? e.message : String(e))}`,
        `${flag} takes ${what} in PEM`,
      );
    }
  });
}

/** A PEM key with a passphrase (PKCS#8, or the older Proc-Type header): OpenSSL would ask for it on the terminal. */
const ENCRYPTED = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/;

function privateKey(file: string, pem: Buffer): KeyObject {
  if (ENCRYPTED.test(pem.toString("latin1")))
    throw new InputError(
      file,
      "",
      "the key is encrypted",
      "give it unencrypted, e.g. openssl pkey -in KEY -out PLAIN, and keep PLAIN readable by strata alone",
    );
  try {
    return createPrivateKey(pem);
  } catch (e) {
    throw new InputError(
      file,
      "",
      `not a PEM private key: ${excerpt(e instanceof Error ? e.message : String(e))}`,
      "--tls-key takes the private key of --tls-cert's certificate, PEM",
    );
  }
}

/** Reads and checks the files: certificates that parse, a key that parses and is the certificate's. */
export function loadTls(files: TlsFiles): Tls {
  const cert = read(files.cert, "--tls-cert");
  const key = read(files.key, "--tls-key");
  const ca = files.ca === undefined ? undefined : read(files.ca, "--tls-ca");
  const [own] = certificates(files.cert, cert, "--tls-cert", "the server's certificate, and its chain if any,");
  const k = privateKey(files.key, key);
  if (own !== undefined && !own.checkPrivateKey(k)) {
    throw new InputError(
      files.key,
      "",
      `not the key of the certificate in ${files.cert} (${excerpt(own.subject.replace(/\n/g, ", "))})`,
      "give the key the certificate was made for",
    );
  }
  if (files.ca !== undefined && ca !== undefined)
    certificates(files.ca, ca, "--tls-ca", "the certificates of the CAs that sign the clients' certificates");
  return { cert, key, ...(ca !== undefined ? { ca } : {}) };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether HOST (of a HOST:PORT listen address) is this machine's loopback: 127.0.0.0/8, ::1 (IPv4-mapped too),
 * localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1");
  if (h.toLowerCase() === "localhost") return true;
  if (isIPv4(h)) return LOOPBACK.check(h, "ipv4");
  return isIPv6(h) && LOOPBACK.check(h, "ipv6");
}
