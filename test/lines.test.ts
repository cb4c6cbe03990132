// The bounded line reader: lines split wherever the chunks break, "\r\n" and
// a last line without a newline, the bound at limit and limit + 1, and a line
// far over the limit held to limit + 1 bytes while it is dropped.

import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type Line, LineSplitter, readLines } from "../src/lines.js";

const ok = (number: number, text: string): Line => ({ ok: true, number, text });
const long = (number: number): Line => ({ ok: false, number });

describe("LineSplitter", () => {
  const cases: { name: string; limit?: number; chunks: (string | Uint8Array)[]; lines: Line[] }[] = [
    { name: "two lines", chunks: ["a\nbc\n"], lines: [ok(1, "a"), ok(2, "bc")] },
    { name: "a last line without a newline", chunks: ["a\nbc"], lines: [ok(1, "a"), ok(2, "bc")] },
    { name: "no input", chunks: [], lines: [] },
    { name: "empty lines", chunks: ["\n\n"], lines: [ok(1, ""), ok(2, "")] },
    { name: "\\r\\n ends a line", chunks: ["a\r\nb\r\n"], lines: [ok(1, "a"), ok(2, "b")] },
    { name: "a lone \\r is the line's", chunks: ["a\rb\n"], lines: [ok(1, "a\rb")] },
    { name: "a line across chunks", chunks: ["ab", "c", "d\ne", "f"], lines: [ok(1, "abcd"), ok(2, "ef")] },
    {
      name: "a character across chunks",
      chunks: [Buffer.from("é\n").subarray(0, 1), Buffer.from("é\n").subarray(1)],
      lines: [ok(1, "é")],
    },
    { name: "at the limit", limit: 4, chunks: ["abcd\n"], lines: [ok(1, "abcd")] },
    { name: "at the limit, with \\r\\n", limit: 4, chunks: ["abcd\r\n"], lines: [ok(1, "abcd")] },
    { name: "limit + 1, then a good line", limit: 4, chunks: ["abcde\nok\n"], lines: [long(1), ok(2, "ok")] },
    { name: "limit + 1 with \\r\\n", limit: 4, chunks: ["abcde\r\n"], lines: [long(1)] },
    { name: "limit + 1 across chunks", limit: 4, chunks: ["ab", "cd", "e", "\nok"], lines: [long(1), ok(2, "ok")] },
    { name: "a long last line without a newline", limit: 4, chunks: ["ok\nabcdefgh"], lines: [ok(1, "ok"), long(2)] },
    { name: "the limit counts bytes, not characters", limit: 4, chunks: ["ééé\néé\n"], lines: [long(1), ok(2, "éé")] },
    { name: "limit 0", limit: 0, chunks: ["\na\n"], lines: [ok(1, ""), long(2)] },
  ];
  it.each(cases)("$name", ({ limit, chunks, lines }) => {
    const split = new LineSplitter(limit ?? 100);
    const got = [...chunks.flatMap((c) => split.push(c)), ...split.end()];
    expect(got).toEqual(lines);
  });

  it("holds at most limit + 1 bytes of a line far over the limit, and reads the next line", () => {
    const split = new LineSplitter(4096);
    const chunk = Buffer.alloc(65536, 0x78);
    let most = 0;
    for (let i = 0; i < 1024; i++) {
      expect(split.push(chunk)).toEqual(i === 0 ? [long(1)] : []);
      most = Math.max(most, split.held);
    }
    expect(most).toBeLessThanOrEqual(4097);
    expect(split.push("\ncounts\n")).toEqual([ok(2, "counts")]);
  });

  // A reader that stops at a line over its limit must not wait for a newline that never comes (issue 35).
  it.each([
    { name: "in one chunk", chunks: ["abcdef"], at: 0 },
    { name: "the byte that passes the limit in the third chunk", chunks: ["ab", "cd", "ef", "gh"], at: 2 },
    { name: "after a good line", chunks: ["ok\nabcdef"], at: 0 },
  ])("a line over the limit comes out as soon as it passes it, before any newline: $name", ({ chunks, at }) => {
    const split = new LineSplitter(4);
    const got = chunks.map((c) => split.push(c).filter((l) => !l.ok));
    expect(got.findIndex((lines) => lines.length > 0)).toBe(at);
    expect(got.flat()).toHaveLength(1);
    expect(split.end()).toEqual([]);
  });

  it.each([-1, 1.5, Number.NaN])("refuses a limit of %s", (limit) => {
    expect(() => new LineSplitter(limit)).toThrow(RangeError);
  });
});

describe("readLines", () => {
  it("reads a stream's lines", async () => {
    const got: Line[] = [];
    for await (const line of readLines(Readable.from([Buffer.from("a\nbbbbbb\n"), "c"]), 3)) got.push(line);
    expect(got).toEqual([ok(1, "a"), long(2), ok(3, "c")]);
  });
});
