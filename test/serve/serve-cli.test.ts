// `strata serve` from the command line, without interfaces (those are in
// live.test.ts): bad flags, ports and interfaces are one line and exit 2 with
// nothing running; control commands act between batches and say what they did.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type Io, MemorySink, memoryIo, StreamSink } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { serve } from "../../src/cli/serve.js";
import { COMMAND_LINE_MAX } from "../../src/serve/control.js";
import { loadCap } from "../../src/serve/ports.js";
import { nativeHelper } from "../../src/serve/port-backend.js";
import { until } from "../helpers/wait.js";

const root = new URL("../..", import.meta.url).pathname;
const spec = join(root, "examples/live-router/network.yaml");
const hasCap = loadCap().cap !== undefined;
/** An interface can be looked up: with cap, or the native port process (--port-backend packet). */
const canOpen = hasCap || nativeHelper() !== undefined;

describe("strata serve: bad input is one line, exit 2, nothing running", () => {
  const cases: { name: string; args: string[]; line: RegExp; noOut?: boolean }[] = [
    {
      name: "a port without =",
      args: ["--port", "lanA:hostA"],
      line: /^strata: --port 'lanA:hostA' must be ENDPOINT=IFACE, e\.g\. --port lanA:hostA=veth0\n$/,
    },
    {
      name: "an unknown external link",
      args: ["--port", "lanA:h9=eth0"],
      line: new RegExp(
        [
          String.raw`^strata: --port lanA:h9=eth0: network lanA has no external link 'h9'`,
          String.raw` \(external links: lanA:hostA, lanB:hostB, ip:netA, ip:netB\)\n$`,
        ].join(""),
      ),
    },
    {
      name: "an unknown network",
      args: ["--port", "lanC:hostA=eth0"],
      line: /^strata: --port lanC:hostA=eth0 names no network of the description: write NETWORK:EXTERNAL/,
    },
    {
      name: "one link bound twice",
      args: ["--port", "lanA:hostA=a0", "--port", "lanA:hostA=b0"],
      line: /lanA:hostA is already bound by --port lanA:hostA=a0 \(one interface per external link\)/,
    },
    {
      name: "one interface bound twice",
      args: ["--port", "lanA:hostA=a0", "--port", "lanB:hostB=a0"],
      line: /interface a0 is already bound by --port lanA:hostA=a0 \(one external link per interface\)/,
    },
    {
      name: "--trace without --out",
      args: ["--trace"],
      noOut: true,
      line: /^strata: --trace writes trace\.jsonl into --out: give --out DIR too\n$/,
    },
    {
      name: "--trace-packets without --out",
      args: ["--trace-packets", "0-9"],
      noOut: true,
      line: /^strata: --trace-packets writes trace\.jsonl into --out: give --out DIR too\n$/,
    },
    {
      name: "--trace-max without a trace",
      args: ["--trace-max", "5"],
      line: new RegExp(
        [
          String.raw`^strata: --trace-max bounds trace\.jsonl, which --trace or --trace-packets writes:`,
          String.raw` give one of them too\n$`,
        ].join(""),
      ),
    },
    {
      name: "a bad --trace-packets",
      args: ["--trace-packets", "9-0"],
      line: /^strata: --trace-packets 9-0: 9-0 ends before it starts \(write 0-9\)\n$/,
    },
    {
      name: "a --trace-max of 0",
      args: ["--trace", "--trace-max", "0"],
      line: /^strata: --trace-max 0 is too small \(at least 1\)\n$/,
    },
    {
      name: "a --trace-max that is not a number",
      args: ["--trace", "--trace-max", "1G"],
      line: /^strata: --trace-max 1G is not a whole number \(give 1 to 1000000\)\n$/,
    },
    { name: "a bad hop limit", args: ["--hop-limit", "0"], line: /^strata: --hop-limit 0 is too small/ },
    {
      name: "--port-backend without --port",
      args: ["--port-backend", "cap"],
      line: /^strata: --port-backend chooses what opens the --port interfaces: give --port too\n$/,
    },
    {
      name: "an unknown --port-backend",
      args: ["--port-backend", "pcap", "--port", "lanA:hostA=eth0"],
      line: /^strata: option '--port-backend <backend>' argument 'pcap' is invalid: allowed choices are cap, packet/,
    },
  ];
  // cap is optional: without it or the native port process, a --port that names an interface gets the install line
  // (below).
  const withCap: typeof cases = [
    {
      name: "an interface that does not exist",
      args: ["--port", "lanA:hostA=nosuch0"],
      line: /^strata: --port lanA:hostA=nosuch0: there is no interface 'nosuch0' \(interfaces: .*lo/,
    },
  ];
  it.each([...cases, ...(canOpen ? withCap : [])])("$name", async ({ args, line, noOut }) => {
    const out = join(mkdtempSync(join(tmpdir(), "strata-serve-")), "out");
    try {
      const io = memoryIo();
      expect(await main(["serve", spec, ...args, ...(noOut === true ? [] : ["--out", out])], io)).toBe(2);
      expect(io.stderr.text).toMatch(line);
      expect(io.stderr.text.split("\n")).toHaveLength(2);
      expect(io.stdout.text).toBe("");
      expect(existsSync(out)).toBe(false); // refused before --out was touched
    } finally {
      rmSync(join(out, ".."), { recursive: true, force: true });
    }
  });

  it.skipIf(hasCap)("without cap, --port-backend cap says how to install it", async () => {
    const io = memoryIo();
    expect(await main(["serve", spec, "--port", "lanA:hostA=eth0", "--port-backend", "cap"], io)).toBe(2);
    expect(io.stderr.text).toMatch(
      new RegExp(
        [
          String.raw`^strata: --port needs the package cap, which is not installed or did`,
          String.raw` not build: .*apt-get install libpcap-dev .*npm install cap\n$`,
        ].join(""),
      ),
    );
  });

  it("a description that does not validate", async () => {
    const io = memoryIo();
    expect(await main(["serve", join(root, "examples/live-router/nope.yaml")], io)).toBe(2);
    expect(io.stderr.text).toMatch(/^strata: .*nope\.yaml/);
  });
});

describe("strata serve --commands", () => {
  /** serve with --commands on a stream of ours; said(pattern) waits until stderr matches. */
  const serveCommands = (): {
    commands: PassThrough;
    io: ReturnType<typeof memoryIo>;
    done: Promise<number>;
    said: (pattern: RegExp) => Promise<void>;
  } => {
    const commands = new PassThrough();
    const io = memoryIo();
    const done = serve(spec, { port: [], commands: true, json: true, hopLimit: 64, copyLimit: 4096 }, io, { commands });
    const said = async (pattern: RegExp): Promise<void> =>
      void (await until(
        () => pattern.test(io.stderr.text),
        () => `never said ${pattern}: ${io.stderr.text}`,
      ));
    return { commands, io, done, said };
  };

  it("runs each command between batches and answers on stderr; stop ends it with exit 0", async () => {
    const { commands, io, done, said } = serveCommands();
    await said(/^serving .*network\.yaml \(no ports\); Ctrl-C stops\n/);
    const steps: [string, RegExp][] = [
      ["counts", /^injected 0, copies 0, delivered 0, dropped 0, left 0, row hits 0 on 0 rows\n(?!port )/m],
      ["delete ip:r forward 1", /^deleted ip\.r forward row 1 \(dst 10\.0\.2\.0\/24 → out 2\)$/m],
      [
        "delete ip:r forward 1",
        new RegExp(
          [
            String.raw`^strata: cannot delete ip\.r forward row 1 \(dst 10\.0\.2\.0\/24 → out`,
            String.raw` 2\): it is not in the table \(insert it first\)$`,
          ].join(""),
          "m",
        ),
      ],
      ["insert ip:r forward 1", /^inserted ip\.r forward row 1/m],
      ["insert ip:r forward 1", /^strata: cannot insert .*: it is in the table already \(delete it first\)$/m],
      ["delete ip:r forward 7", /^strata: ip\.r's forward table has no row '7' \(rows: 0, 1\)$/m],
      [
        "delete ip:r forward 00001",
        new RegExp(
          [
            String.raw`^strata: ip\.r's forward table: row identifier '00001': leading zeros are ambiguous`,
            String.raw` \(octal to some tools\) \(write 1\)$`,
          ].join(""),
          "m",
        ),
      ],
      ["insert ip:r forward 0x1", /^strata: ip\.r's forward table: row identifier '0x1' is not written in decimal/m],
      ["down link ip:r.01", /^strata: no link 'ip:r\.01' \(write NETWORK:MEMBER\.ID or a link name; links: /m],
      ["delete ip:q forward 0", /^strata: there is no member 'ip:q' \(members: lanA:r, lanB:r, ip:r\)$/m],
      [
        "delete ip:r bogus 0",
        /^strata: 'bogus' is not a table \(tables: acquire, forward, transmit, send, receive\)$/m,
      ],
      [
        "delete ip:r",
        /^strata: delete takes three words \(write delete NETWORK:MEMBER TABLE ROW, e\.g\. delete ip:r forward 1\)$/m,
      ],
      [
        "frobnicate",
        /^strata: unknown command 'frobnicate' \(commands: delete, insert, reload, down, up, counts, stop, help\)$/m,
      ],
      ["help", /^commands, one a line:$/m],
    ];
    for (const [command, answer] of steps) {
      commands.write(`${command}\n`);
      await said(answer);
    }
    commands.write("stop\n");
    expect(await done).toBe(0);
    const summary = JSON.parse(io.stdout.text) as { packets: { injected: number }; ports: unknown[] };
    expect(summary.packets.injected).toBe(0);
    expect(summary.ports).toEqual([]); // no --port
  });

  it(`a command line over ${COMMAND_LINE_MAX} bytes is one line and ignored; the next one runs`, async () => {
    const { commands, io, done, said } = serveCommands();
    await said(/Ctrl-C stops\n/);
    const counts = "injected 0, copies 0, delivered 0, dropped 0, left 0, row hits 0 on 0 rows";
    // At the limit (spaces after the command), at the limit + 1, and 16 MiB in pieces: never held whole.
    commands.write(`counts${" ".repeat(COMMAND_LINE_MAX - 6)}\n`);
    commands.write(`counts${" ".repeat(COMMAND_LINE_MAX - 5)}\n`);
    for (let i = 0; i < 256; i++) commands.write(Buffer.alloc(1 << 16, 0x78));
    commands.write("\ncounts\nstop\n");
    expect(await done).toBe(0);
    const tooLong = (n: number): string =>
      `strata: command line ${n} is too long: over ${COMMAND_LINE_MAX} bytes, the limit (ignored)`;
    expect(io.stderr.text.split("\n").slice(1)).toEqual([counts, tooLong(2), tooLong(3), counts, "stopping", ""]);
  });

  it("a reader of stderr that reads nothing stops the commands, not memory", async () => {
    // stderr whose reader never reads: its first write is never done, the rest queue in the stream.
    const waiting: (() => void)[] = [];
    let release = false;
    const stuck = new Writable({
      highWaterMark: 1 << 14,
      write(_chunk, _encoding, done) {
        if (release) done();
        else waiting.push(() => done());
      },
    });
    const io: Io = { stdout: new MemorySink(), stderr: new StreamSink(stuck), stderrIsTTY: false };
    const commands = new PassThrough();
    const controller = new AbortController();
    const done = serve(spec, { port: [], commands: true, json: true, hopLimit: 64, copyLimit: 4096 }, io, {
      commands,
      signal: controller.signal,
    });
    // 64 KiB chunks, as a pipe gives them: 7 MB of counts, a million of them.
    const chunk = Buffer.from("counts\n".repeat((1 << 16) / 8));
    const chunks = Math.ceil(7e6 / chunk.length);
    for (let i = 0; i < chunks; i++) commands.write(chunk);
    const unread = (): number => commands.readableLength + commands.writableLength;
    // Until serve stops reading (the input paused with its answers unwritten) or has read everything (as it did).
    for (let turn = 0; turn < 100_000 && !(commands.isPaused() && waiting.length > 0) && unread() > 0; turn++)
      await new Promise((r) => setImmediate(r));
    const read = chunks * chunk.length - unread();
    expect(read).toBeLessThanOrEqual(2 * chunk.length);
    expect(stuck.writableLength).toBeLessThanOrEqual(1 << 16);
    controller.abort();
    release = true;
    for (const w of waiting.splice(0)) w();
    expect(await done).toBe(0);
  });

  it("stops on its signal as on Ctrl-C, writing --out", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-serve-"));
    try {
      const controller = new AbortController();
      const io = memoryIo();
      const done = serve(spec, { port: [], out: join(dir, "out"), trace: true, hopLimit: 64, copyLimit: 4096 }, io, {
        signal: controller.signal,
      });
      await new Promise((r) => setTimeout(r, 50));
      controller.abort();
      expect(await done).toBe(0);
      expect(io.stdout.text).toMatch(/^served 0 packets through .*network\.yaml in [\d.]+ s\n/);
      expect(io.stdout.text).toMatch(
        new RegExp(
          String.raw`\noutputs in .*out: summary\.json, links/ \(\d+ recordings?\), ` +
            String.raw`delivered/ \(\d+ recordings?\), trace\.jsonl\n`,
        ),
      );
      expect(existsSync(join(dir, "out", "summary.json"))).toBe(true);
      expect(existsSync(join(dir, "out", ".strata-output"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
