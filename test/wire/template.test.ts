// Header templates (assembly/wire/template.ts): a send row's header made once,
// then copied in front of a packet with its length fields and IPv4 checksum
// patched (RFC 1624). Each case writes the template's header for a payload
// length and holds it to the header emitted field by field for that length,
// and to this file's own reading of the header: its length fields, and an
// IPv4 checksum summed from scratch here. Buffers start filled with 0xa5, so a
// byte written outside the header (or the block in front of it) shows.

import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";
import { Tables } from "../../src/wasm/tables.js";
import type { DesignDef } from "../../src/wire/designs.js";
import { design, vector } from "./helpers/keys.js";

const dp = DataPlane.load();
const x = dp.exports;
const FILL = 0xa5;
const BLOCK = 48;
const ROOM = 64; // bytes of the buffer in front of the header's end

const u16 = (b: Uint8Array, at: number): number => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);

/** The Internet checksum of `b` (RFC 1071) summed from scratch: 0 for a header whose checksum is right. */
function checksumOf(b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += u16(b, i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

interface Written {
  /** The header the template wrote, and the one emit wrote for the same payload length. */
  templated: Uint8Array;
  emitted: Uint8Array;
  /** Bytes around the header the template's write left as they were (0xa5): in front, and after. */
  frontUntouched: boolean;
  afterUntouched: boolean;
}

/** Writes the header of `d` with `fields` for `payloadLen` bytes both ways (the template's whole block, or not). */
function write(d: DesignDef, fields: Uint8Array, payloadLen: number, block: boolean): Written | undefined {
  const key = dp.alloc(fields.length);
  const tp = dp.alloc(dp.constant("TEMPLATE_LEN"));
  const buf = dp.alloc(ROOM + 64);
  const ref = dp.alloc(64);
  try {
    dp.mem.u8.set(fields, key);
    const hlen = x.designTemplate(d.id, key, tp);
    if (hlen === 0) return undefined;
    dp.mem.u8.fill(FILL, buf, buf + ROOM + 64);
    dp.mem.u8.fill(FILL, ref, ref + 64);
    const at = buf + ROOM - hlen;
    x.designWriteTemplate(tp, at, payloadLen, block ? 1 : 0);
    x.designEmit(d.id, ref, key, payloadLen);
    const u8 = dp.mem.u8;
    const front = u8.slice(buf, buf + ROOM - (block ? BLOCK : hlen));
    const after = u8.slice(buf + ROOM, buf + ROOM + 64);
    return {
      templated: u8.slice(at, at + hlen),
      emitted: u8.slice(ref, ref + hlen),
      frontUntouched: front.every((b) => b === FILL),
      afterUntouched: after.every((b) => b === FILL),
    };
  } finally {
    for (const p of [key, tp, buf, ref]) dp.free(p);
  }
}

/** The header's length fields as this file reads them: [offset, what it must say for `payloadLen`]. */
type Lengths = (hlen: number, payloadLen: number) => [number, number][];
const ipv4Total: Lengths = (hlen, n) => [[2, hlen + n]];

const addresses = { src: 0xc0a80001n, dst: 0x0a000002n };
const cases: { name: string; design: string; fields: Record<string, bigint>; lengths: Lengths; ipv4: boolean }[] = [
  {
    name: "ethernet",
    design: "ethernet",
    fields: { dst: 0x020000000002n, src: 0x020000000001n, type: 0x0800n },
    lengths: () => [],
    ipv4: false,
  },
  {
    name: "ethernet, one tag",
    design: "ethernet",
    fields: { dst: 0x020000000002n, src: 0x020000000001n, type: 0x0800n, vid: 100n, pcp: 5n },
    lengths: () => [],
    ipv4: false,
  },
  {
    name: "ethernet, two tags",
    design: "ethernet",
    fields: { dst: 0xffffffffffffn, src: 0x020000000001n, type: 0x86ddn, vid: 7n, ivid: 4094n },
    lengths: () => [],
    ipv4: false,
  },
  {
    name: "ipv4",
    design: "ipv4",
    fields: { ...addresses, proto: 6n, ttl: 64n, dscp: 46n },
    lengths: ipv4Total,
    ipv4: true,
  },
  {
    name: "ipv4, every address bit set",
    design: "ipv4",
    fields: { src: 0xffffffffn, dst: 0xffffffffn, proto: 255n, ttl: 255n, dscp: 63n },
    lengths: ipv4Total,
    ipv4: true,
  },
  { name: "gre", design: "gre", fields: { ...addresses, ttl: 64n, type: 0x6558n }, lengths: ipv4Total, ipv4: true },
  {
    name: "gre with a key",
    design: "gre",
    fields: { ...addresses, ttl: 1n, dscp: 10n, type: 0x0800n, key: 0xdeadbeefn, keyed: 1n },
    lengths: ipv4Total,
    ipv4: true,
  },
  {
    name: "vxlan",
    design: "vxlan",
    fields: { ...addresses, ttl: 64n, sport: 49152n, dport: 4789n, vni: 0xabcdefn },
    lengths: (hlen, n) => [
      [2, hlen + n],
      [24, 16 + n],
    ],
    ipv4: true,
  },
  {
    name: "ipv6",
    design: "ipv6",
    fields: {
      src: 0x20010db8000000000000000000000001n,
      dst: 0x20010db8000000000000000000000002n,
      next: 17n,
      hlim: 64n,
    },
    lengths: (_hlen, n) => [[4, n]],
    ipv4: false,
  },
  {
    name: "cna",
    design: "cna",
    fields: { src: 1n, dst: 2n, session: 7n, overlay: 3n },
    lengths: () => [],
    ipv4: false,
  },
  {
    name: "mpls",
    design: "mpls",
    fields: { label: 0x12345n, tc: 5n, s: 1n, ttl: 64n },
    lengths: () => [],
    ipv4: false,
  },
];
const PAYLOADS = [0, 1, 46, 1480, 9000];

describe("a header written from its template", () => {
  for (const c of cases) {
    const d = design(c.design);
    const fields = vector(d, c.fields);
    describe(c.name, () => {
      it.each(PAYLOADS.flatMap((n) => [true, false].map((block) => ({ n, block }))))(
        "payload $n bytes, block $block",
        ({ n, block }) => {
          const w = write(d, fields, n, block);
          expect(w).toBeDefined();
          if (w === undefined) return;
          expect(w.templated).toEqual(w.emitted);
          for (const [at, value] of c.lengths(w.templated.length, n)) expect(u16(w.templated, at)).toBe(value);
          if (c.ipv4) expect(checksumOf(w.templated.slice(0, 20))).toBe(0);
          expect(w.frontUntouched).toBe(true);
          expect(w.afterUntouched).toBe(true);
        },
      );
    });
  }
});

describe("the incremental checksum against one summed from scratch", () => {
  // Every total length an IPv4 header can state, so every value the checksum's sum passes through, the end-around
  // carries at 0xffff included.
  it.each([
    { name: "ipv4", design: "ipv4", fields: { ...addresses, proto: 17n, ttl: 64n } },
    { name: "vxlan", design: "vxlan", fields: { src: 0xfffffffen, dst: 0xffff0000n, ttl: 255n, vni: 1n } },
  ])("$name: every payload length", ({ design: name, fields }) => {
    const d = design(name);
    const key = vector(d, fields);
    const first = write(d, key, 0, true);
    const hlen = first?.templated.length ?? 0;
    const wrong: number[] = [];
    for (let n = 0; n + hlen <= 0xffff; n += 1) {
      const w = write(d, key, n, n % 2 === 0);
      if (w === undefined || checksumOf(w.templated.slice(0, 20)) !== 0 || u16(w.templated, 2) !== hlen + n) {
        wrong.push(n);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe("a design with no template", () => {
  it.each([
    { name: "no design", id: 0 },
    { name: "an unknown design", id: 200 },
  ])("$name: none made", ({ id }) => {
    const key = dp.alloc(48);
    const tp = dp.alloc(dp.constant("TEMPLATE_LEN"));
    dp.mem.u8.fill(0, key, key + 48);
    expect(x.designTemplate(id, key, tp)).toBe(0);
    dp.free(key);
    dp.free(tp);
  });
});

describe("a send row's install", () => {
  // A send table as the compiler makes one: keyed by the session, the row's push carrying the design in arg.
  const SESSION = { name: "session", offset: 0, len: 4, kind: "exact" } as const;
  const vxlan = design("vxlan");
  const fields = vector(vxlan, { ...addresses, ttl: 64n, sport: 49152n, dport: 4789n, vni: 42n });
  /** The template in the data of row 0 of a send table given a push with `arg`, and one made from the fields. */
  function installed(id: number, arg: number): { installed: Uint8Array; made: Uint8Array } {
    const tables = new Tables(dp);
    const table = { id, role: "send", kind: "exact", keyLen: 8, capacity: 4, fields: [SESSION] } as const;
    tables.create(table);
    const value = new Uint8Array(8);
    value[3] = 7;
    const mask = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    const r = tables.write([
      {
        op: "insert",
        table,
        match: { value, mask, priority: 0 },
        action: { name: "push", count: 24, arg, data: fields },
      },
    ]);
    expect(r.ok).toBe(true);
    const len = dp.constant("TEMPLATE_LEN");
    const out = dp.alloc(64);
    const key = dp.alloc(fields.length);
    const tp = dp.alloc(len);
    try {
      expect(x.tableEntry(id, 0, out)).toBeTruthy();
      const data = dp.mem.view.getUint32(out + 16, true);
      dp.mem.u8.set(fields, key);
      x.designTemplate(arg, key, tp);
      return { installed: dp.mem.u8.slice(data + 48, data + 48 + len), made: dp.mem.u8.slice(tp, tp + len) };
    } finally {
      for (const p of [out, key, tp]) dp.free(p);
      tables.destroy(table);
    }
  }
  it.each([
    { name: "made from its fields and its design", id: 9001, arg: vxlan.id, design: vxlan.id },
    { name: "none without a design (arg 0)", id: 9002, arg: 0, design: 0xff },
  ])("$name", ({ id, arg, design: made }) => {
    const t = installed(id, arg);
    expect(t.installed).toEqual(t.made);
    expect(t.installed[48]).toBe(made);
  });
});
