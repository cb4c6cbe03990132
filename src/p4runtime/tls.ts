// TLS for the P4Runtime server: the PEM files of --tls-cert, --tls-key and --tls-ca, read and
// checked before the server starts, so that a bad one is strata's one line naming the file
// (gRPC would take a CA file with no certificate in it, and fail on the others only when it
// binds); and whether a listen address stays on this machine.

import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { excerpt, formatInputError, InputError } from "../errors.js";
import { readBounded } from "../read-file.js";

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

/** The largest TLS file strata reads: a certificate, a key or a CA bundle (the whole Mozilla bundle is ~220 KiB). */
export const MAX_TLS_FILE_BYTES = 1024 * 1024;

/** A TLS file named by `flag` (--tls-cert, --tls-key, --tls-ca), bounded, its errors said by the flag. */
export function readTlsFile(file: string, flag: string): Buffer {
  return readBounded(file, MAX_TLS_FILE_BYTES, {
    what: `the ${flag} file`,
    noun: `${flag} file`,
    fix: "",
    tooLarge: `${flag} takes PEM text: a certificate or a key is a few KiB`,
  });
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

/**
 * Reads and checks the files: certificates that parse, a key that parses and is the certificate's,
 * CA certificates that can sign. A certificate outside its dates is not refused (the clock may be
 * wrong, or the file about to be renewed) but said in a line to `warn`.
 */
export function loadTls(files: TlsFiles, warn: (line: string) => void = () => {}): Tls {
  const cert = readTlsFile(files.cert, "--tls-cert");
  const key = readTlsFile(files.key, "--tls-key");
  const ca = files.ca === undefined ? undefined : readTlsFile(files.ca, "--tls-ca");
  const chain = certificates(files.cert, cert, "--tls-cert", "the server's certificate, and its chain if any,");
  const [own] = chain;
  const k = privateKey(files.key, key);
  if (own !== undefined && !own.checkPrivateKey(k)) {
    throw new InputError(
      files.key,
      "",
      `not the key of the certificate in ${files.cert} (${subjectOf(own)})`,
      "give the key the certificate was made for",
    );
  }
  checkDates(files.cert, chain, "clients that check it refuse the server", warn);
  if (files.ca !== undefined && ca !== undefined) {
    const cas = certificates(
      files.ca,
      ca,
      "--tls-ca",
      "the certificates of the CAs that sign the clients' certificates",
    );
    cas.forEach((c, k) => {
      // OpenSSL takes as an issuer only a CA's certificate; a self-signed one stands for itself (pinned).
      if (!c.ca && !(c.checkIssued(c) && c.verify(c.publicKey)))
        throw new InputError(
          files.ca ?? "",
          `certificate ${k + 1}`,
          `${subjectOf(c)} is not a CA's certificate: it cannot sign a client's certificate`,
          "--tls-ca takes the certificates of the CAs that sign the clients' certificates, not a client's own",
        );
    });
    checkDates(files.ca, cas, "a client whose certificate it signed is refused", warn);
  }
  return { cert, key, ...(ca !== undefined ? { ca } : {}) };
}

/** "CN=server, O=lab": a certificate's subject on one line. */
const subjectOf = (c: X509Certificate): string => excerpt(c.subject.replace(/\n/g, ", "));

/** A line to `warn` for each certificate of `file` that has expired or is not valid yet. */
function checkDates(file: string, certs: readonly X509Certificate[], then: string, warn: (line: string) => void): void {
  const now = Date.now();
  const day = (d: Date): string => d.toISOString().replace(/\.000Z$/, "Z");
  certs.forEach((c, k) => {
    const from = new Date(c.validFrom);
    const to = new Date(c.validTo);
    const problem =
      now > to.getTime()
        ? `${subjectOf(c)} expired on ${day(to)}`
        : now < from.getTime()
          ? `${subjectOf(c)} is not valid before ${day(from)}`
          : undefined;
    const fix = `${then}: renew it, or check this machine's clock`;
    if (problem !== undefined) warn(`strata: warning: ${formatInputError(file, `certificate ${k + 1}`, problem, fix)}`);
  });
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
