// Every command that writes files into --out (strata run, strata serve, strata export p4)
// goes through one guard (src/out-dir.ts): the same refusals for each, one line and exit 2
// with nothing touched; and what each writes is marked, so the next command replaces
// exactly that.

import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { snapshot } from "./helpers/snapshot.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");
const EXAMPLE = join(root, "examples/hub-and-spoke");
const EXPECTED = join(EXAMPLE, "expected");

// Outputs go to `dir`; inputs a test copies or links go to `specs`.
let dir = "";
let specs = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-out-"));
  specs = mkdtempSync(join(tmpdir(), "strata-out-specs-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(specs, { recursive: true, force: true });
});

interface Writer {
  readonly name: string;
  /** The command line writing into `out`, reading `input` (the file a case copies, moves or links). */
  argv(out: string, input: string | undefined, ...more: string[]): string[];
  /** The file the command reads that a case may put inside --out. */
  readonly input: string;
  /** A file and a subdirectory the command writes in --out. */
  readonly file: string;
  readonly subdir: string;
}

const WRITERS: readonly Writer[] = [
  {
    name: "run",
    argv: (out, input, ...more) => ["run", HUB, "--in", `lan:h1.1=${input ?? H1}`, "--out", out, ...more],
    input: H1,
    file: "links/lan.h1.1-hub.1.pcap",
    subdir: "links",
  },
  {
    name: "export p4",
    argv: (out, input, ...more) => ["export", "p4", input ?? HUB, "--out", out, ...more],
    input: HUB,
    file: "h1/main.p4",
    subdir: "h1",
  },
  {
    name: "serve",
    argv: (out, input, ...more) => ["serve", input ?? HUB, "--out", out, ...more],
    input: HUB,
    file: "summary.json",
    subdir: "links",
  },
];

/** Runs strata in this process; a serve that starts is stopped as by Ctrl-C once it says it is serving. */
async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const done = main(argv, io);
  if (argv[0] === "serve") {
    let ended = false;
    void done.finally(() => {
      ended = true;
    });
    while (!ended && !/^serving /m.test(io.stderr.text)) await new Promise((r) => setTimeout(r, 5));
    // A turn of the event loop first: an earlier serve's handlers leave on the next one.
    await new Promise((r) => setImmediate(r));
    if (!ended) process.emit("SIGINT");
  }
  const code = await done;
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const copy = (from: string, to: string): string => {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  return to;
};

interface Case {
  readonly name: string;
  readonly setup?: (w: Writer) => Promise<void>;
  readonly argv: (w: Writer) => string[];
  readonly watch: () => string;
  readonly error: (w: Writer) => RegExp;
  /** The writers the case is for (all by default). */
  readonly only?: readonly string[];
}

const CASES: readonly Case[] = [
  {
    name: "an input inside --out",
    argv: (w) => w.argv(dir, copy(w.input, join(dir, "inputs", basename(w.input)))),
    watch: () => dir,
    error: () =>
      new RegExp(
        [
          String.raw`: --out holds an input, .*inputs\/[^/]+ \(strata writes and removes`,
          String.raw` files in --out: choose a directory that holds none of the inputs\)\n$`,
        ].join(""),
      ),
  },
  {
    name: "an input in --out, paths relative",
    argv: (w) =>
      w.argv(relative(process.cwd(), dir), relative(process.cwd(), copy(w.input, join(dir, basename(w.input))))),
    watch: () => dir,
    error: () => /: --out holds an input, /,
  },
  {
    name: "--out a symbolic link to the input's directory",
    argv: (w) => {
      symlinkSync(dir, join(specs, "alias"));
      return w.argv(join(specs, "alias"), copy(w.input, join(dir, basename(w.input))));
    },
    watch: () => dir,
    error: () => /alias: --out holds an input, /,
  },
  {
    name: "--out the directory of the description",
    argv: (w) => w.argv(EXAMPLE, undefined),
    watch: () => EXAMPLE,
    error: () => /hub-and-spoke: --out holds an input, .*network\.yaml/,
  },
  {
    name: "--out a parent of the description, relative",
    argv: (w) => w.argv(relative(process.cwd(), join(root, "examples")), undefined),
    watch: () => join(root, "examples"),
    error: () => /^strata: [^ ]*examples: --out holds an input, /,
  },
  {
    name: "--out the golden outputs of an example",
    argv: (w) => w.argv(EXPECTED, undefined),
    watch: () => EXPECTED,
    error: () =>
      new RegExp(
        [
          String.raw`expected: --out is not empty and has no \.strata-output: strata did`,
          String.raw` not write it \(choose a new or empty directory, or add --force to`,
          String.raw` write beside its files\)\n$`,
        ].join(""),
      ),
  },
  {
    name: "--out the golden outputs, with --force",
    only: ["run", "serve"],
    argv: (w) => w.argv(EXPECTED, undefined, "--force"),
    watch: () => EXPECTED,
    error: () => /expected: links\/lan\.h1\.1-hub\.1\.pcap is already there and strata did not write it/,
  },
  {
    name: "a directory with other files",
    argv: (w) => {
      writeFileSync(join(dir, "notes.txt"), "mine");
      return w.argv(dir, undefined);
    },
    watch: () => dir,
    error: () => /: --out is not empty and has no \.strata-output: strata did not write it/,
  },
  {
    name: "--force, and a file strata would write is there",
    argv: (w) => {
      mkdirSync(dirname(join(dir, w.file)), { recursive: true });
      writeFileSync(join(dir, w.file), "mine");
      return w.argv(dir, undefined, "--force");
    },
    watch: () => dir,
    error: (w) =>
      new RegExp(
        `: ${w.file.replace(/\./g, "\\.")} is already there and strata did not write it \\(strata replaces only ` +
          `files it wrote: move it away or choose another --out\\)\\n$`,
      ),
  },
  {
    name: "a marker strata did not write",
    argv: (w) => {
      writeFileSync(join(dir, ".strata-output"), `${w.file}\n`);
      return w.argv(dir, undefined);
    },
    watch: () => dir,
    error: () => /: --out is not empty and has no \.strata-output: strata did not write it/,
  },
  {
    name: "a marker that lists a file outside strata's outputs",
    setup: async (w) => {
      await strata(...w.argv(dir, undefined));
      writeFileSync(join(dir, ".strata-output"), `${readFileSync(join(dir, ".strata-output"), "utf8")}../keep.txt\n`);
    },
    argv: (w) => w.argv(dir, undefined),
    watch: () => dir,
    error: () => /: --out is not empty and has no \.strata-output: strata did not write it/,
  },
  {
    name: "an earlier output replaced by a hard link to the input",
    setup: async (w) => {
      await strata(...w.argv(dir, undefined));
      rmSync(join(dir, w.file));
      linkSync(copy(w.input, join(specs, basename(w.input))), join(dir, w.file));
    },
    argv: (w) => w.argv(dir, join(specs, basename(w.input))),
    watch: () => dir,
    error: (w) => new RegExp(`: ${w.file.replace(/\./g, "\\.")} is an input \\(the same file\\)`),
  },
  {
    name: "an earlier output replaced by a symbolic link",
    setup: async (w) => {
      await strata(...w.argv(dir, undefined));
      rmSync(join(dir, w.file));
      symlinkSync(copy(w.input, join(specs, "victim")), join(dir, w.file));
    },
    argv: (w) => w.argv(dir, undefined),
    watch: () => specs,
    error: (w) => new RegExp(`: ${w.file.replace(/\./g, "\\.")} is already there and strata did not write it`),
  },
  {
    name: "an earlier output's directory replaced by a symbolic link",
    setup: async (w) => {
      await strata(...w.argv(dir, undefined));
      copy(join(dir, w.file), join(specs, w.file));
      rmSync(join(dir, w.subdir), { recursive: true });
      symlinkSync(join(specs, w.subdir), join(dir, w.subdir));
    },
    argv: (w) => w.argv(dir, undefined),
    watch: () => specs,
    error: (w) => new RegExp(`: ${w.subdir} is already there and strata did not write it`),
  },
  {
    name: "--out an existing file",
    argv: (w) => w.argv(copy(H1, join(specs, "file.pcap")), undefined),
    watch: () => specs,
    error: () =>
      /file\.pcap: --out must be a directory, and this is a file \(choose a new or empty directory for --out\)\n$/,
  },
  {
    name: "--out under a file",
    argv: (w) => w.argv(join(copy(H1, join(specs, "file.pcap")), "x"), undefined),
    watch: () => specs,
    error: () => /file\.pcap\/x: --out cannot be made: .*file\.pcap is a file \(/,
  },
  {
    name: "--out where even root may not write (/sys)",
    argv: (w) => w.argv("/sys/strata-out", undefined),
    watch: () => specs,
    error: () =>
      /^strata: \/sys\/strata-out: cannot write in --out: permission denied \(choose a directory you can write to\)\n$/,
  },
  {
    name: "--out where no directory can be made (/proc)",
    argv: (w) => w.argv("/proc/strata-out/x", undefined),
    watch: () => specs,
    error: () => /^strata: \/proc\/strata-out\/x: cannot write in --out: no such file \(/,
  },
];

describe("--out: every command that writes files refuses the same things, one line, exit 2, nothing touched", () => {
  const table = WRITERS.flatMap((writer) =>
    CASES.filter((c) => c.only === undefined || c.only.includes(writer.name)).map((c) => ({
      ...c,
      writer,
      label: `${writer.name}: ${c.name}`,
    })),
  );
  it.each(table)("$label", async ({ writer, setup, argv, watch, error }) => {
    await setup?.(writer);
    const args = argv(writer);
    const before = snapshot(watch());
    const r = await strata(...args);
    expect(r.stderr).toMatch(error(writer));
    expect(r.stderr.split("\n")).toHaveLength(2);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(snapshot(watch())).toEqual(before);
  });
});

describe("--out: what each command writes is marked, and the next command replaces exactly that", () => {
  it.each(WRITERS)("$name", async (w) => {
    expect((await strata(...w.argv(dir, undefined))).code).toBe(0);
    const marker = readFileSync(join(dir, ".strata-output"), "utf8").split("\n");
    expect(marker[0]).toBe(
      `# strata ${w.name} wrote the files below; the next run into this directory replaces them, and no other file.`,
    );
    expect(marker).toContain(w.file);
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, w.subdir, "mine.pcap"), "mine");
    writeFileSync(join(dir, w.file), "changed by hand");
    expect((await strata(...w.argv(dir, undefined))).code).toBe(0);
    expect(readFileSync(join(dir, w.file), "utf8")).not.toBe("changed by hand");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(dir, w.subdir, "mine.pcap"), "utf8")).toBe("mine");
  });

  it("a directory strata wrote for one command takes another's outputs, and the first's go", async () => {
    expect((await strata("export", "p4", HUB, "--out", dir)).code).toBe(0);
    expect(existsSync(join(dir, "h1", "main.p4"))).toBe(true);
    expect((await strata("run", HUB, "--in", `lan:h1.1=${H1}`, "--out", dir)).code).toBe(0);
    expect(existsSync(join(dir, "h1"))).toBe(false);
    expect(existsSync(join(dir, "summary.json"))).toBe(true);
  });
});

describe("strata serve: a final write that fails is one line and exit 2, the counts still reported", () => {
  it.each([
    { name: "no ports", more: [] as string[] },
    { name: "no ports, a P4Runtime server", more: ["--p4runtime", "127.0.0.1:0"] },
  ])("$name: --out removed during the run", async ({ more }) => {
    const out = join(dir, "out");
    const io = memoryIo();
    const done = main(["serve", HUB, "--out", out, ...more], io);
    while (!/^serving /m.test(io.stderr.text)) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
    rmSync(out, { recursive: true });
    process.emit("SIGINT");
    expect(await done).toBe(2);
    expect(io.stdout.text).toMatch(/^served 0 packets through /);
    expect(io.stdout.text).not.toMatch(/outputs in/);
    expect(io.stderr.text).toMatch(
      new RegExp(
        `^strata: ${out}: cannot write in --out: no such file \\(choose a directory you can write to\\)\\n$`,
        "m",
      ),
    );
    expect(io.stderr.text.split("\n").filter((l) => l.startsWith("strata:"))).toHaveLength(1);
  });
});
