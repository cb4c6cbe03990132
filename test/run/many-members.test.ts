// `strata run` on a description of 20,000 members with a captured link each: what
// it costs follows the packets, not the members. The data plane used to give
// every capture file a 256 KiB buffer of its own (20,000 links: 5 GB it cannot
// address; from 8,000 members the run ended in a RuntimeError), and the output
// side a writer of its own; now the records of every file share one ring.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { LINKTYPE, MAX_CAP_LEN_DEFAULT } from "../../src/pcap/index.js";
import type { Summary } from "../../src/engine/summary.js";
import { pcapFile, type PcapRecordSpec } from "../pcap/builders.js";

const MEMBERS = 20_000;

/**
 * A one-way chain m0 → m1 → … → m19999 of cna members, every link captured. m0 … m3 take
 * packets addressed to them (name k + 1) and pass the others on; the rest have no tables, so a
 * packet that reaches one is dropped there (acquire-miss).
 */
function chain(): string {
  const lines = ["networks:", "  chain:", "    header: cna", "    members:"];
  for (let k = 0; k < MEMBERS; k++) lines.push(`      m${k}: { name: ${k + 1} }`);
  lines.push("    links:");
  for (let k = 0; k + 1 < MEMBERS; k++) lines.push(`      - { from: m${k}.1, to: m${k + 1}.0 }`);
  lines.push("    tables:");
  for (let k = 0; k < 4; k++) {
    lines.push(
      `      m${k}:`,
      `        acquire: [ { match: { dst: ${k + 1} }, do: receive }, { do: forward } ]`,
      "        forward: [ { out: 1 } ]",
      "        receive: [ { do: deliver } ]",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** A cna packet to `dst` (src 1, session 0, overlay 0), its payload marked with `mark`. */
function packet(dst: number, mark: number): Uint8Array {
  const p = new Uint8Array(14 + 16).fill(mark);
  const v = new DataView(p.buffer);
  v.setUint32(0, 1);
  v.setUint32(4, dst);
  v.setUint32(8, 0);
  v.setUint16(12, 0);
  return p;
}

/** Packets sent on a member's link: one capture each, timestamps apart so that their merge is fixed. */
const INPUTS = [
  {
    endpoint: "chain:m0.1",
    records: [packet(3, 1), packet(99_999, 2), packet(99_999, 3)].map((data, i) => ({
      sec: 1_700_000_000 + i,
      frac: 10,
      data,
    })),
  },
  {
    endpoint: "chain:m9999.1",
    records: [packet(5, 4), packet(6, 5)].map((data, i) => ({ sec: 1_700_000_000 + i, frac: 20, data })),
  },
  {
    endpoint: "chain:m19998.1",
    records: [packet(7, 6), packet(8, 7)].map((data, i) => ({ sec: 1_700_000_000 + i, frac: 30, data })),
  },
];
const [M0, M9999, M19998] = INPUTS.map((i) => i.records);

/** A file as strata writes captures: nanosecond timestamps, cna's link type, libpcap's snaplen. */
const captureFile = (records: PcapRecordSpec[]): Buffer =>
  Buffer.from(pcapFile({ nano: true, snapLen: MAX_CAP_LEN_DEFAULT, linkTypeField: LINKTYPE.USER0 }, records));

/** Every file the run must write, and what it holds: m0's packets go as far as m4 (m2 takes the one to name 3). */
const EXPECTED = new Map<string, Buffer>([
  ["links/chain.m0.1-m1.0.pcap", captureFile(M0 ?? [])],
  ["links/chain.m1.1-m2.0.pcap", captureFile(M0 ?? [])],
  ["links/chain.m2.1-m3.0.pcap", captureFile(M0?.slice(1) ?? [])],
  ["links/chain.m3.1-m4.0.pcap", captureFile(M0?.slice(1) ?? [])],
  ["links/chain.m9999.1-m10000.0.pcap", captureFile(M9999 ?? [])],
  ["links/chain.m19998.1-m19999.0.pcap", captureFile(M19998 ?? [])],
  ["delivered/chain.m2.pcap", captureFile(M0?.slice(0, 1) ?? [])],
]);

describe(`strata run on ${MEMBERS.toLocaleString("en")} members, a captured link each`, () => {
  let dir = "";
  let result: {
    code: number;
    stdout: string;
    stderr: string;
    summary: Summary | undefined;
    files: Map<string, Buffer>;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "strata-many-"));
    const spec = join(dir, "chain.yaml");
    writeFileSync(spec, chain());
    const args = ["run", spec, "--out", join(dir, "out"), "--json"];
    INPUTS.forEach((input, k) => {
      const file = join(dir, `in${k}.pcap`);
      writeFileSync(file, pcapFile({ nano: true, linkTypeField: LINKTYPE.USER0 }, input.records));
      args.push("--in", `${input.endpoint}=${file}`);
    });
    const io = memoryIo();
    const code = await main(args, io);
    const files = new Map<string, Buffer>();
    for (const sub of ["links", "delivered"]) {
      for (const name of readdirSync(join(dir, "out", sub)))
        files.set(`${sub}/${name}`, readFileSync(join(dir, "out", sub, name)));
    }
    result = {
      code,
      stdout: io.stdout.text,
      stderr: io.stderr.text,
      summary: code === 0 ? (JSON.parse(io.stdout.text) as Summary) : undefined,
      files,
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("exits 0", () => {
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  });

  it("writes a capture for each link and member that had packets, and only those", () => {
    expect([...result.files.keys()].sort()).toEqual([...EXPECTED.keys()].sort());
  });

  it.each([...EXPECTED.keys()])("%s holds its packets, byte for byte", (file) => {
    expect(result.files.get(file)?.equals(EXPECTED.get(file) ?? Buffer.alloc(0))).toBe(true);
  });

  it("counts every packet's fate", () => {
    expect(result.summary?.packets).toEqual({ injected: 7, copies: 0, delivered: 1, dropped: 6, exited: 0 });
    expect(result.summary?.drops).toEqual({ "acquire-miss": 6 });
  });
});
