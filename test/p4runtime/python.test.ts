// A cross-check by a client that shares no code with strata: Python's grpcio and protobuf
// (./python-client.py, stubs made here from proto/p4runtime with grpc_tools.protoc) against the
// server over the IP router example. Skipped, saying why, where that Python is not installed
// (.ci/run installs Debian's python3-grpcio, python3-grpc-tools and python3-protobuf).

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { protoDir } from "../../src/p4runtime/definitions.js";
import { R, serve } from "./ip-router.js";

const here = new URL(".", import.meta.url).pathname;

/** A Python that has grpcio, grpc_tools and protobuf, or why there is none. */
function findPython(): { python: string } | { missing: string } {
  for (const python of ["/usr/bin/python3", "python3"]) {
    const r = spawnSync(python, ["-c", "import grpc, grpc_tools.protoc, google.protobuf"], { encoding: "utf8" });
    if (r.status === 0) return { python };
  }
  return {
    missing:
      "no python3 with grpcio, grpc_tools and protobuf (apt-get install " +
      "python3-grpcio python3-grpc-tools python3-protobuf)",
  };
}

const found = findPython();
const protos = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".proto"))
    .map((f) => relative(dir, join(dir, f)));

describe.skipIf("missing" in found)(
  `a Python controller (grpcio)${"missing" in found ? ` (skipped: ${found.missing})` : ""}`,
  () => {
    test(
      "§5.3, §8.2, §9.1.3, §9.1.6, §9.1.7, §12, §13.2, §13.3, §16.1: every " + "check of python-client.py passes",
      async () => {
        if (!("python" in found)) return;
        const stubs = mkdtempSync(join(tmpdir(), "strata-p4rt-py-"));
        const s = await serve(true);
        try {
          const protoc = spawnSync(
            found.python,
            [
              "-m",
              "grpc_tools.protoc",
              `-I${protoDir()}`,
              `--python_out=${stubs}`,
              `--grpc_python_out=${stubs}`,
              ...protos(protoDir()),
            ],
            { encoding: "utf8" },
          );
          expect(protoc.stderr).toBe("");
          // Asynchronous: the server answers on this event loop.
          const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(found.python, [join(here, "python-client.py"), s.address, String(R)], {
              env: { ...process.env, PYTHONPATH: stubs },
            });
            let stdout = "";
            let stderr = "";
            child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
            child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
            child.on("close", (status) => resolve({ status, stdout, stderr }));
          });
          expect(run.stderr).toBe("");
          expect(run.stdout.split("\n").filter((l) => l.startsWith("FAIL"))).toEqual([]);
          expect(run.stdout).toMatch(/^12\/12 passed$/m);
          expect(run.status).toBe(0);
        } finally {
          await s.server.close();
          rmSync(stubs, { recursive: true, force: true });
        }
      },
    );
  },
);
