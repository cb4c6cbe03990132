// strata run --queue and strata worker against a Redis that wants a login and speaks TLS, as docs/scale-out.md tells
// a user to set it up: the default user off, an ACL user allowed only strata's keys (strata:*, bull:strata-run-*),
// Lua scripts and INFO (not KEYS, FLUSHALL, CONFIG: -@dangerous); a certificate made here with openssl, trusted by the
// worker through Node's NODE_EXTRA_CA_CERTS. The coordinator logs in over the plain port (redis://user:pass@…), the
// worker over TLS (rediss://user:pass@…): outputs one thread's. A wrong password is one line.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { runQueued } from "../../src/queue/coordinator.js";
import { parseQueueUrl } from "../../src/queue/redis.js";
import { replay } from "../../src/run/replay.js";
import { expectSameFiles } from "../helpers/outputs.js";
import { redisMissing, TestRedis, TestWorker } from "./servers.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const HUB = join(ROOT, "examples/hub-and-spoke/network.yaml");
const CAPTURE = join(ROOT, "test/fixtures/pcaps-real/various_gre.pcap");
/** What docs/scale-out.md gives strata's ACL user. */
const RULES = "~strata:* ~bull:strata-run-* &* +@all -@dangerous +info";
const [USER, PASSWORD] = ["strata", "s3cret:@/pw"];
const LOGIN = `${USER}:${encodeURIComponent(PASSWORD)}@`;

/** Why TLS cannot be tried here: no openssl, or a redis-server built without it. */
function tlsMissing(): string | undefined {
  if (spawnSync("openssl", ["version"]).status !== 0) return "openssl is not installed";
  // A build with TLS asks for the key; one without refuses the option.
  const tried = spawnSync("redis-server", ["--port", "0", "--tls-port", "1", "--tls-cert-file", "/none"], {
    encoding: "utf8",
  });
  return /No tls-key-file configured/.test(`${tried.stdout}${tried.stderr}`)
    ? undefined
    : "redis-server is built without TLS";
}

const missing = redisMissing() ?? tlsMissing();

describe.skipIf(missing !== undefined)(
  `--queue with an ACL user and TLS${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    let scratch = "";
    let redis: TestRedis;
    let worker: TestWorker | undefined;
    let cert = "";

    beforeAll(async () => {
      scratch = mkdtempSync(join(tmpdir(), "strata-queue-secure-"));
      cert = join(scratch, "cert.pem");
      const key = join(scratch, "key.pem");
      const made = spawnSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
          .concat(["-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1", "-days", "1"])
          .concat(["-addext", "subjectAltName=IP:127.0.0.1"]),
        { encoding: "utf8" },
      );
      if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);
      redis = new TestRedis({ users: [{ name: USER, password: PASSWORD, rules: RULES }], tls: { cert, key } });
      await redis.start();
    });
    afterAll(async () => {
      await worker?.stop();
      await redis.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    const both = "a worker over rediss:// and a coordinator over redis://, both as the ACL user: one thread's outputs";
    it(both, async () => {
      worker = new TestWorker(`rediss://${LOGIN}127.0.0.1:${redis.tlsPort}`, [], { NODE_EXTRA_CA_CERTS: cert });
      await worker.ready();
      const options = { spec: HUB, inputs: [{ endpoint: "lan:h2.1", file: CAPTURE }], trace: true };
      const one = join(scratch, "one");
      replay({ ...options, out: one, workers: 1 });
      const dir = join(scratch, "queued");
      const address = parseQueueUrl(`redis://${LOGIN}127.0.0.1:${redis.port}`);
      const queued = await runQueued({ ...options, out: dir, address, chunkPackets: 10 });
      expectSameFiles(dir, one);
      expect(queued.chunks).toBeGreaterThan(1);
      expect(worker.ran().length).toBe(queued.chunks);
    });

    it.each([
      ["a wrong password", () => `redis://${USER}:hunter2@127.0.0.1:${redis.port}`, /WRONGPASS/],
      ["no login", () => `redis://127.0.0.1:${redis.port}`, /NOAUTH/],
    ])("%s: one line, the password never shown", async (_, url, why) => {
      const io = memoryIo();
      expect(await main(["worker", "--queue", url()], io)).toBe(2);
      const lines = io.stderr.text.split("\n").filter((l) => l !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(why);
      expect(lines[0]).not.toContain("hunter2");
    });
  },
);
