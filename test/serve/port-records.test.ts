// The records strata serve and its port process exchange over a pipe: whatever
// way the stream is cut into chunks, the reader gives back the records written.

import { describe, expect, it } from "vitest";
import { FLAG_CUT, RECORD, RECORD_HEADER, RecordReader, RecordWriter, record } from "../../src/serve/port-records.js";

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

// The writer gathers records into a slab and hands each run out as a view: every view holds whole
// records, the views together are the records' bytes, and a view handed out (a pipe may hold it
// until it drains) keeps its bytes while the writer goes on.
describe("RecordWriter", () => {
  const body = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);
  it.each([
    { name: "records that fill the slab exactly", slab: 32, bodies: [8, 8, 8, 8], flushAt: [] as number[] },
    { name: "a record past the slab's edge starts a new slab", slab: 32, bodies: [10, 10, 10], flushAt: [] },
    { name: "a record longer than a slab", slab: 32, bodies: [4, 100, 4], flushAt: [] },
    { name: "empty bodies", slab: 32, bodies: [0, 0, 0, 0, 0], flushAt: [] },
    { name: "flushed after every record", slab: 64, bodies: [1, 2, 3, 4], flushAt: [0, 1, 2, 3] },
    { name: "flushed mid-slab, then more", slab: 64, bodies: [20, 20, 20, 20], flushAt: [1] },
  ])("$name", ({ slab, bodies, flushAt }) => {
    const views: Buffer[] = [];
    const w = new RecordWriter((b) => views.push(b), slab);
    const records = bodies.map((n, i) => record(RECORD.FRAME, i, body(n, 0xa0 + i), i % 2));
    bodies.forEach((n, i) => {
      w.put(RECORD.FRAME, i, body(n, 0xa0 + i), i % 2);
      if (flushAt.includes(i)) w.flush();
    });
    w.flush();
    expect(w.count).toBe(0);
    expect(w.bytes).toBe(0);
    // Every view is whole records; all of them are the records written, in order.
    const perView = views.map((v) => readAll([v]).length);
    expect(perView.reduce((a, b) => a + b, 0)).toBe(bodies.length);
    expect(Buffer.concat(views).toString("hex")).toBe(Buffer.concat(records).toString("hex"));
  });
  it("a view handed out keeps its bytes while records go on (a full pipe holds it)", () => {
    const held: Buffer[] = [];
    const w = new RecordWriter((b) => held.push(b), 48);
    const want: Buffer[] = [];
    for (let i = 0; i < 20; i++) {
      const r = record(RECORD.FRAME, i, body(i % 7, i));
      want.push(r);
      w.put(RECORD.FRAME, i, body(i % 7, i));
      if (i % 3 === 0) w.flush();
    }
    w.flush();
    expect(Buffer.concat(held).toString("hex")).toBe(Buffer.concat(want).toString("hex"));
  });
  it("flush with nothing put writes nothing; drop forgets what was put", () => {
    const views: Buffer[] = [];
    const w = new RecordWriter((b) => views.push(b), 64);
    w.flush();
    w.put(RECORD.FRAME, 0, body(5, 1));
    w.put(RECORD.FRAME, 0, body(5, 2));
    expect([w.count, w.bytes]).toEqual([2, 2 * (RECORD_HEADER + 5)]);
    expect(w.drop()).toBe(2);
    w.flush();
    expect(views).toEqual([]);
    w.put(RECORD.FRAME, 3, body(1, 9));
    w.flush();
    expect(views.map((v) => v.toString("hex"))).toEqual([record(RECORD.FRAME, 3, body(1, 9)).toString("hex")]);
  });
});

// What the writer hands one pipe, read back by the other end whatever sizes the pipe's reads are.
describe("RecordWriter to RecordReader", () => {
  const bodies = Array.from({ length: 50 }, (_, i) => Buffer.alloc((i * 37) % 200, i));
  const views: Buffer[] = [];
  const w = new RecordWriter((b) => views.push(b), 512);
  bodies.forEach((b, i) => {
    w.put(RECORD.FRAME, i, b, i & 1);
    if (i % 9 === 0) w.flush();
  });
  w.flush();
  const stream = Buffer.concat(views);
  const want = bodies.map((b, i) => ({ kind: RECORD.FRAME, port: i, flags: i & 1, body: b.toString("hex") }));
  it.each([
    { name: "as the writer handed them out", reads: views },
    {
      name: "reads of 1,000 bytes",
      reads: Array.from({ length: Math.ceil(stream.length / 1000) }, (_, k) =>
        stream.subarray(k * 1000, k * 1000 + 1000),
      ),
    },
    {
      name: "reads of 7 bytes",
      reads: Array.from({ length: Math.ceil(stream.length / 7) }, (_, k) => stream.subarray(k * 7, k * 7 + 7)),
    },
  ])("$name", ({ reads }) => {
    expect(readAll(reads)).toEqual(want);
  });
});
