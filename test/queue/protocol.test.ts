// What a coordinator and its workers say through Redis, without a Redis: --queue addresses read (and refused), chunk
// payloads written and read back (and refused when damaged), outputs likewise, and the version a worker compares
// being package.json's.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ChunkDamaged,
  chunkPayload,
  decodeChunk,
  decodeOutputs,
  encodeOutputs,
  PacketsWriter,
} from "../../src/queue/chunk-codec.js";
import { PROTOCOL, refusal, STRATA_VERSION } from "../../src/queue/protocol.js";
import { parseQueueUrl } from "../../src/queue/redis.js";
import type { InputBatch } from "../../src/wasm/runner.js";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("queue protocol", () => {
  it("the version a worker compares is package.json's", () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { version: string };
    expect(STRATA_VERSION).toBe(pkg.version);
  });

  it.each([
    ["redis://127.0.0.1:6380", { host: "127.0.0.1", port: 6380 }, "redis://127.0.0.1:6380"],
    ["redis://h", { host: "h", port: 6379 }, "redis://h"],
    ["redis://h:1/3", { host: "h", port: 1, db: 3 }, "redis://h:1/3"],
    [
      "rediss://strata:s%40cret@r.example:6390/0",
      {
        host: "r.example",
        port: 6390,
        db: 0,
        username: "strata",
        password: "s@cret",
        tls: { servername: "r.example" },
      },
      "rediss://strata@r.example:6390/0",
    ],
    ["redis://[::1]:7000", { host: "::1", port: 7000 }, "redis://[::1]:7000"],
    ["rediss://127.0.0.1:6390", { host: "127.0.0.1", port: 6390, tls: {} }, "rediss://127.0.0.1:6390"],
  ])("%s reads as its connection, shown without its password", (url, options, shown) => {
    expect(parseQueueUrl(url)).toEqual({ options, shown });
  });

  it.each([
    ["127.0.0.1:6379", "not a URL"],
    ["http://h:6379", "http:// is not Redis's"],
    ["redis://h:6379/db", "/db is not a database number"],
    ["redis://h:6379/?x=1", "a query or fragment is not taken"],
  ])("%s is refused: %s", (url, why) => {
    expect(() => parseQueueUrl(url)).toThrow(`--queue ${url}: ${why} (give redis://HOST:PORT[/DB]`);
  });

  it.each([
    [{ protocol: PROTOCOL, version: STRATA_VERSION, digest: "ab" }, undefined],
    [
      { protocol: PROTOCOL + 1, version: STRATA_VERSION, digest: "ab" },
      new RegExp(String.raw`queue protocol ${PROTOCOL + 1}\), this worker is strata`),
    ],
    [{ protocol: PROTOCOL, version: "9.9.9", digest: "ab" }, /the job is from strata 9\.9\.9/],
    [{ protocol: PROTOCOL, version: STRATA_VERSION, digest: "cd" }, /description digest cd… is not its run's \(ab…\)/],
  ])("a job %o: %s", (job, why) => {
    const got = refusal(job, { digest: "ab" });
    if (why === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(why);
  });

  /** A batch of `n` packets at endpoint `endpoint` (or one each), data at odd offsets in a larger buffer. */
  const batch = (n: number, endpoint: number | "each"): InputBatch => {
    const data = new Uint8Array(7 + n * 40).fill(0xa5);
    const offset = new Uint32Array(n);
    const capLen = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      offset[i] = 7 + i * 40;
      capLen[i] = 20 + i;
      for (let k = 0; k < 20 + i; k++) data[7 + i * 40 + k] = (i * 31 + k) & 0xff;
    }
    return {
      data,
      count: n,
      offset,
      capLen,
      origLen: capLen.map((l) => l + 100),
      tsSec: Float64Array.from({ length: n }, (_, i) => 1_700_000_000 + i),
      tsNsec: Uint32Array.from({ length: n }, (_, i) => i * 1000),
      endpoint: endpoint === "each" ? Uint32Array.from({ length: n }, (_, i) => i % 3) : endpoint,
    };
  };
  const packets = (b: InputBatch): unknown[] =>
    Array.from({ length: b.count }, (_, i) => ({
      bytes: [...b.data.subarray(b.offset[i], (b.offset[i] ?? 0) + (b.capLen[i] ?? 0))],
      orig: b.origLen[i],
      sec: b.tsSec[i],
      nsec: b.tsNsec[i],
      endpoint: typeof b.endpoint === "number" ? b.endpoint : b.endpoint[i],
    }));

  it.each([
    ["one part, one endpoint", [batch(5, 2)]],
    ["three parts, an endpoint each packet, an empty part", [batch(3, "each"), batch(0, 1), batch(9, "each")]],
    ["no parts", []],
  ])("a chunk of %s reads back packet for packet", (_name, parts) => {
    const back = decodeChunk(chunkPayload(parts));
    expect(back.map(packets)).toEqual(parts.map(packets));
  });

  it("a chunk reads back at any alignment in its buffer (viewed where aligned, copied where not)", () => {
    const parts = [batch(3, "each"), batch(9, 2)];
    const payload = chunkPayload(parts);
    for (const shift of [0, 1, 4]) {
      const at = Buffer.alloc(payload.length + shift, 0xa5);
      payload.copy(at, shift);
      expect(decodeChunk(at.subarray(shift)).map(packets)).toEqual(parts.map(packets));
    }
  });

  it("one writer serves chunk after chunk: each payload taken holds its own parts alone", () => {
    const w = new PacketsWriter();
    const chunks = [[batch(2, 1)], [batch(20, "each"), batch(1, 0)], [], [batch(3, 2)]];
    const back = chunks.map((parts) => {
      for (const p of parts) w.add(p);
      return decodeChunk(Buffer.from(w.take())).map(packets);
    });
    expect(back).toEqual(chunks.map((parts) => parts.map(packets)));
  });

  it.each([
    ["cut short", (b: Buffer) => b.subarray(0, b.length - 3), /the payload ends at byte/],
    ["with bytes after it", (b: Buffer) => Buffer.concat([b, Buffer.of(1)]), /1 bytes after the last part/],
    ["not a chunk", () => Buffer.from("damaged"), /not a strata chunk of packets/],
    ["empty", () => Buffer.alloc(0), /not a strata chunk of packets/],
  ])("a chunk %s is refused", (_name, damage, why) => {
    const good = chunkPayload([batch(4, 1)]);
    expect(() => decodeChunk(damage(good))).toThrow(ChunkDamaged);
    expect(() => decodeChunk(damage(good))).toThrow(why);
  });

  it("a chunk's outputs read back: records, trace lines (UTF-8), counters with their hits", () => {
    const outputs = {
      records: [
        { recording: 3, bytes: Uint8Array.of(1, 2, 3), crc: 0x55bc801d },
        { recording: 0, bytes: Uint8Array.of(9), crc: 0xffffffff },
      ],
      lines: { text: '{"packet":7,"at":"é"}\n', packets: [7], bytes: [23] },
      counters: {
        injected: 4,
        copied: 1,
        linkPackets: [1, 2],
        linkBytes: [60, 120],
        delivered: [0, 3],
        drops: [[0, 1]],
        hits: new Map([[5, [1, 0, 2]]]),
      },
    };
    // The pieces end to end, as a Redis key or a file under --shared holds them.
    const payload = Buffer.concat(encodeOutputs(outputs));
    const back = decodeOutputs(payload);
    expect({ ...back, records: back.records.map((r) => ({ ...r, bytes: [...r.bytes] })) }).toEqual({
      ...outputs,
      records: outputs.records.map((r) => ({ ...r, bytes: [...r.bytes] })),
    });
    expect(() => decodeOutputs(payload.subarray(0, 40))).toThrow(ChunkDamaged);
    expect(() => decodeOutputs(Buffer.concat(encodeOutputs(outputs).slice(0, -1)))).toThrow(ChunkDamaged);
  });
});
