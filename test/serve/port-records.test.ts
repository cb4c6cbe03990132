// The records strata serve and its port process exchange over a pipe: whatever
// way the stream is cut into chunks, the reader gives back the records written.

import { describe, expect, it } from "vitest";
import { FLAG_CUT, RECORD, RecordReader, record } from "../../src/serve/port-records.js";

const frames = [
  { kind: RECORD.FRAME, port: 0, flags: 0, body: Buffer.from("0200000000fe0200000000010800", "hex") },
  { kind: RECORD.FRAME, port: 7, flags: FLAG_CUT, body: Buffer.alloc(70000, 0xab) },
  { kind: RECORD.OPENED, port: 0, flags: 0, body: Buffer.from('["ETHERNET"]') },
  { kind: RECORD.SEND_ERROR, port: 254, flags: 0, body: Buffer.alloc(0) },
];
const stream = Buffer.concat(frames.map((f) => record(f.kind, f.port, f.body, f.flags)));

function readAll(chunks: Buffer[]): { kind: number; port: number; flags: number; body: string }[] {
  const got: { kind: number; port: number; flags: number; body: string }[] = [];
  const reader = new RecordReader((kind, port, flags, body) =>
    got.push({ kind, port, flags, body: body.toString("hex") }),
  );
  for (const c of chunks) reader.feed(c);
  return got;
}

describe("port records", () => {
  const want = frames.map((f) => ({ kind: f.kind, port: f.port, flags: f.flags, body: f.body.toString("hex") }));
  it("header: kind, port, flags, length little-endian", () => {
    expect([...record(RECORD.FRAME, 3, Buffer.from([9, 8]), FLAG_CUT)]).toEqual([1, 3, 1, 0, 2, 0, 0, 0, 9, 8]);
  });
  it.each([
    { name: "one chunk", cut: [] as number[] },
    { name: "cut inside a header", cut: [3, 11] },
    { name: "cut inside a body", cut: [20, 40000] },
    { name: "byte by byte at the edges", cut: [1, 2, 3, 4, 5, 6, 7, 8, 9, 22, 23, 70029, 70030] },
  ])("$name", ({ cut }) => {
    const points = [0, ...cut, stream.length];
    const chunks = points.slice(1).map((end, i) => stream.subarray(points[i], end));
    expect(readAll(chunks)).toEqual(want);
  });
  it("holds back an incomplete record", () => {
    expect(readAll([stream.subarray(0, stream.length - 1)])).toEqual(want.slice(0, 3));
  });
});
