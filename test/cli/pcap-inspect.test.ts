// `strata pcap inspect`, in process through main() and once through the built bin.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { openCapture } from "../../src/pcap/reader.js";
import { DAMAGED_FILE, REAL_DIR, REAL_FILES, REPO_ROOT, type RealFile } from "../pcap/real-files.js";

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

/** The JSON lines tshark's view of a file implies: its per-section interface ids, its lengths and times. */
function expectedJson(file: RealFile, shownAs: string): string {
  const reader = openCapture(file.path);
  try {
    for (const _ of reader.batches());
  } catch {
    // The damaged file: its interfaces are known by now all the same.
  }
  reader.close();
  return file.packets
    .map((p, index) => {
      const iface = reader.interfaces.filter((i) => i.section === p.section)[p.interface];
      return `${JSON.stringify({
        file: shownAs,
        index,
        interface: p.interface,
        linkType: iface?.linkType,
        tsNs: p.tsNs,
        capLen: p.capLen,
        origLen: p.origLen,
      })}\n`;
    })
    .join("");
}

describe("strata pcap inspect --json", () => {
  it.each(REAL_FILES)("prints what tshark sees in $name", async (file) => {
    const { code, stdout, stderr } = await run("pcap", "inspect", "--json", file.path);
    expect(stdout).toBe(expectedJson(file, file.path));
    if (file.tsharkError === undefined) {
      expect([code, stderr]).toEqual([0, ""]);
    } else {
      expect(code).toBe(2);
    }
  });

  it.each([
    { name: "dns_udp.pcap", interfaces: [0, 0], linkTypes: [1, 1] },
    { name: "LINKTYPE_RAW_ipv4.pcap", interfaces: [0], linkTypes: [101] },
    { name: "tcp-handshake-nano.pcap", interfaces: [0, 0, 0], linkTypes: [113, 113, 113] },
    // Three sections: interface ids restart in each, as the blocks carry them and tshark shows them.
    { name: "pcapngtg_le_test202.pcapng", interfaces: [0, 0, 1, 0, 0, 0, 0, 1], linkTypes: [1, 1, 0, 1, 1, 1, 1, 0] },
  ])("gives each packet its interface id and link type: $name", async ({ name, interfaces, linkTypes }) => {
    const { stdout } = await run("pcap", "inspect", "--json", REAL_DIR + name);
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { interface: number; linkType: number });
    expect(rows.map((r) => r.interface)).toEqual(interfaces);
    expect(rows.map((r) => r.linkType)).toEqual(linkTypes);
  });

  it("prints the damaged file's good packet, then one error line, and exits 2", async () => {
    const path = REAL_DIR + DAMAGED_FILE;
    const { code, stdout, stderr } = await run("pcap", "inspect", "--json", path);
    expect(stdout.split("\n")).toHaveLength(2);
    expect(stderr).toBe(
      `strata: ${path}: byte 114: record says caplen 16896 but only 8756 bytes remain (the capture was cut short ` +
        `or the record header is damaged)\n`,
    );
    expect(code).toBe(2);
  });

  it("goes on past a damaged or missing file and exits 2 at the end", async () => {
    const good = REAL_DIR + "dns_udp.pcap";
    const { code, stdout, stderr } = await run(
      "pcap",
      "inspect",
      "--json",
      good,
      REAL_DIR + DAMAGED_FILE,
      "no/such.pcap",
      good,
    );
    expect(stdout.trim().split("\n")).toHaveLength(2 + 1 + 2);
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringContaining(`${DAMAGED_FILE}: byte 114: `),
      "strata: no/such.pcap: cannot open: no such file",
    ]);
    expect(code).toBe(2);
  });

  it("says a file that is not a capture is not one", async () => {
    const { code, stdout, stderr } = await run("pcap", "inspect", "--json", REAL_DIR + "README.md");
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toMatch(
      /^strata: .*README\.md: byte 0: not a pcap or pcapng file: it starts with 23 20 52 65 \(expected pcap magic/,
    );
  });
});

describe("strata pcap inspect (table)", () => {
  const GOLDEN = new URL("../fixtures/golden/pcap-inspect-table.txt", import.meta.url);

  it("matches the golden listing", async () => {
    const names = ["dns_udp.pcap", "tcp-handshake-nano.pcap", "pcapngtg_le_test202.pcapng", DAMAGED_FILE];
    const { code, stdout, stderr } = await run("pcap", "inspect", ...names.map((n) => `pcaps/${n}`));
    expect(code).toBe(2);
    expect(stderr).toContain(`strata: pcaps/${DAMAGED_FILE}: byte 114: `);
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, stdout);
    expect(stdout).toBe(readFileSync(GOLDEN, "utf8"));
  });
});

describe("strata pcap inspect usage", () => {
  it("prints help and exits 0", async () => {
    const { code, stdout } = await run("pcap", "inspect", "--help");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: strata pcap inspect [options] <file...>");
    expect(stdout).toContain("--json");
  });

  it.each([
    { name: "no file", argv: ["pcap", "inspect"] },
    { name: "an unknown flag", argv: ["pcap", "inspect", "--nope", "x.pcap"] },
  ])("exits 2 for $name", async ({ argv }) => {
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).not.toBe("");
  });
});

describe("the built bin", () => {
  const bin = `${REPO_ROOT}dist/src/cli/main.js`;

  it.runIf(existsSync(bin))("runs pcap inspect as a process", () => {
    const ok = spawnSync(process.execPath, [bin, "pcap", "inspect", "--json", "pcaps/dns_udp.pcap"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect([ok.status, ok.stderr]).toEqual([0, ""]);
    const dns = REAL_FILES.find((f) => f.name === "dns_udp.pcap");
    expect(ok.stdout).toBe(dns === undefined ? "" : expectedJson(dns, "pcaps/dns_udp.pcap"));

    const bad = spawnSync(process.execPath, [bin, "pcap", "inspect", `pcaps/${DAMAGED_FILE}`], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain("byte 114");
  });
});
