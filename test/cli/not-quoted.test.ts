// A file given as a description, fleet, target profile or updates file — or named as one by
// another file — that does not look like one of strata's files is refused in one line that
// quotes nothing of it (issue 35): its first line may be a machine id or a token, and the
// line used to show up to 60 characters of it. Each kind is fed files whose first line has no
// key in it, and the line must hold none of their text.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";

const root = new URL("../..", import.meta.url).pathname;
const SPEC = join(root, "examples/ip-router/network.yaml");
const IN = ["--in", `lanA:h1.1=${join(root, "pcaps/example-router-h1.pcap")}`];
const dir = mkdtempSync(join(tmpdir(), "strata-not-quoted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Files that are none of strata's, each with the secret a line must not show. */
const SECRETS = [
  { file: "machine-id", text: "4c4c4544004d3510804bb3c04f563232\n", secret: "4c4c4544" },
  { file: "token", text: "ghp_Zq8rT0kenV4lue\n", secret: "ghp_" },
  { file: "env", text: "TOKEN=s3cr3t-value\nOTHER=1\n", secret: "TOKEN" },
  { file: "shadow", text: "root:$6$salt$hash:19000:0:99999:7:::\n", secret: "root" },
  { file: "number", text: "271828182845\n", secret: "2718" },
];
for (const s of SECRETS) writeFileSync(join(dir, s.file), s.text);

const KINDS: { kind: string; argv: (file: string) => string[]; says: RegExp }[] = [
  {
    kind: "a description",
    argv: (file) => ["check", file],
    says: /: 1:1: must be a map with the key networks, got (text|a number|a map with none of its keys), not quoted: /,
  },
  {
    kind: "a fleet",
    argv: (file) => ["place", SPEC, "--targets", file],
    says: /: 1:1: must be a map with targets and optionally defaults, machines, got (text|a number|a map with none)/,
  },
  {
    kind: "a target profile",
    argv: (file) => ["fit", SPEC, "--target", file],
    says: /: this is not a target profile: it has no key architecture or matchKinds \(give a bundled profile's /,
  },
  {
    kind: "a fleet's target profile",
    argv: (file) => {
      const fleet = join(dir, `fleet-${file.split("/").pop() ?? ""}.yaml`);
      writeFileSync(fleet, `targets:\n  - { name: a, profile: ${file} }\n`);
      return ["place", SPEC, "--targets", fleet];
    },
    says: /: this is not a target profile: it has no key architecture or matchKinds \(give a bundled profile's /,
  },
  {
    kind: "an updates file",
    argv: (file) => ["run", SPEC, ...IN, "--out", join(dir, "out"), "--updates", file],
    says: /: 1:1: must be a list of .*, got (text, not quoted|a number, not quoted|a map$)/m,
  },
  {
    kind: "an update's description",
    argv: (file) => {
      const updates = join(dir, `updates-${file.split("/").pop() ?? ""}.yaml`);
      writeFileSync(updates, `- { at: 0, description: ${file} }\n`);
      return ["run", SPEC, ...IN, "--out", join(dir, "out"), "--updates", updates];
    },
    says: /: this is not a description: it has no key networks \(give the path of a network description/,
  },
];

describe("a file that is none of strata's: one line, none of its text", () => {
  it.each(KINDS.flatMap((k) => SECRETS.map((s) => ({ ...k, ...s }))))(
    "$kind: $file",
    async ({ argv, says, file, secret }) => {
      const io = memoryIo();
      expect(await main(argv(join(dir, file)), io)).toBe(2);
      expect(io.stderr.text).toMatch(says);
      expect(io.stderr.text.split("\n")).toHaveLength(2);
      expect(io.stderr.text.replaceAll(dir, "DIR")).not.toContain(secret);
    },
  );
});
