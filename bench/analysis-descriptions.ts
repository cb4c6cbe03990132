// Descriptions of the size of real tables for the analysis's scale scenarios
// (bench/analysis-scale.ts) and its budget tests: a ternary ACL of random
// masks (rows that overlap every which way), and an edge router (a ternary ACL,
// a range table and LPM routes). Each is YAML text, the same for the same
// arguments (a seeded generator).

/** A small seeded generator (mulberry32): the same numbers for the same seed. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const ip = (x: number): string => [24, 16, 8, 0].map((s) => (x >>> s) & 255).join(".");
const prefixMask = (len: number): number => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);

/** A host and a router whose acquire table is a ternary ACL of `rows` rows, source and destination under sparse
 * random masks: rows that overlap every which way, so their classes multiply. */
export function ternaryAcl(rows: number, seed = 1): string {
  const r = random(seed);
  const acl: string[] = [];
  for (let i = 0; i < rows; i++) {
    const ms = r() & r() & r();
    const md = r() & r() & r();
    const match = `src: "${ip(r() & ms)}&&&${ip(ms)}", dst: "${ip(r() & md)}&&&${ip(md)}"`;
    acl.push(`            - { match: { ${match} }, do: ${i % 2 === 0 ? "receive" : "forward"} }`);
  }
  return `networks:
  ip:
    header: ipv4
    members:
      h1: { name: 10.0.0.1 }
      r: { name: 10.0.0.254 }
    links:
      - { from: h1.1, to: r.1, mode: two-way }
    tables:
      h1:
        forward: [ { in: self, out: 1 } ]
      r:
        acquire:
          kind: ternary
          rows:
${acl.join("\n")}
        receive: [ { do: deliver } ]
        forward: [ { out: 1 } ]
`;
}

/** An edge router between two hosts: a ternary ACL of `acl` rows (prefix masks, protocols, port masks), a range
 * table of `ranges` destination-port rows, and `lpm` routes. */
export function edgeRouter(acl: number, lpm: number, ranges: number, seed = 7): string {
  const r = random(seed);
  const out = [
    "networks:",
    "  ip:",
    "    header: ipv4",
    "    ttl: decrement",
    "    members:",
    "      h1: { name: 10.0.0.1 }",
    "      h2: { name: 10.0.1.1 }",
    "      r: { name: 10.0.0.254 }",
    "    links:",
    "      - { from: h1.1, to: r.1, mode: two-way }",
    "      - { from: r.2, to: h2.1, mode: two-way }",
    "    tables:",
    "      h1:",
    "        forward: [ { in: self, out: 1 } ]",
    "      h2:",
    "        forward: [ { in: self, out: 1 } ]",
    "        acquire: [ { match: { dst: 10.0.1.1 }, do: receive } ]",
    "        receive: [ { do: deliver } ]",
    "      r:",
    "        acquire:",
    "          kind: ternary",
    "          rows:",
  ];
  for (let i = 0; i < acl; i++) {
    const ms = prefixMask(8 + (r() % 25));
    const md = prefixMask(8 + (r() % 25));
    const parts = [`src: "${ip(r() & ms)}&&&${ip(ms)}"`, `dst: "${ip(r() & md)}&&&${ip(md)}"`];
    if (r() % 2 === 1) parts.push(`proto: ${r() % 2 === 1 ? 6 : 17}`);
    if (r() % 3 === 0) {
      const m = (0xffff << (r() % 8)) & 0xffff;
      parts.push(`dport: "${r() & m}&&&${m}"`);
    }
    out.push(`            - { match: { ${parts.join(", ")} }, do: ${r() % 4 === 0 ? "receive" : "forward"} }`);
  }
  out.push("        receive:", "          kind: range", "          rows:");
  for (let i = 0; i < ranges; i++) {
    const lo = r() % 65000;
    out.push(`            - { match: { dport: "${lo}..${lo + (r() % 500)}" }, do: deliver }`);
  }
  out.push("        forward:", "          kind: lpm", "          rows:");
  for (let i = 0; i < lpm; i++) {
    const len = 8 + (r() % 25);
    out.push(`            - { match: { dst: ${ip((r() & prefixMask(len)) >>> 0)}/${len} }, out: ${1 + (r() % 2)} }`);
  }
  return `${out.join("\n")}\n`;
}

/**
 * Prefix lengths of the FIB, with their shares: roughly the shape of the public IPv4 BGP table (the prefix-length
 * distribution the CIDR Report and bgp.potaroo.net publish: about 60% /24, the /22s and /23s next, then /16–/21, few
 * shorter than /16, none longer than /24, which transit providers filter). What is left over is /24.
 */
export const FIB_LENGTHS: readonly (readonly [number, number])[] = [
  [24, 0.6],
  [23, 0.1],
  [22, 0.12],
  [21, 0.05],
  [20, 0.05],
  [19, 0.025],
  [18, 0.012],
  [17, 0.007],
  [16, 0.014],
  [15, 0.004],
  [14, 0.003],
  [13, 0.002],
  [12, 0.0015],
  [11, 0.001],
  [10, 0.0005],
];

/** Next-hop links of the FIB router: r.2 … r.5, to n1 … n4 (r.1 is the host's). */
export const FIB_NEXT_HOPS = 4;

/** A prefix length drawn from FIB_LENGTHS. */
function fibLength(r: () => number): number {
  let x = r() / 2 ** 32;
  for (const [len, share] of FIB_LENGTHS) if ((x -= share) < 0) return len;
  return 24;
}

/**
 * `n` distinct prefixes of FIB_LENGTHS' lengths in 1.0.0.0–223.255.255.255 (unicast), each to a random next hop; with
 * `within` (a prefix length), all in 44.0.0.0/`within`, so that they nest (those as short as it cover all of it).
 */
function fibRows(n: number, r: () => number, within: number): string[] {
  const rows: string[] = [];
  const seen = new Set<string>();
  const block = prefixMask(within);
  while (rows.length < n) {
    const len = fibLength(r);
    const address = within === 0 ? ((1 + (r() % 223)) << 24) | (r() & 0xffffff) : (0x2c000000 & block) | (r() & ~block);
    const p = (address & prefixMask(len)) >>> 0;
    const key = `${p}/${len}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push(`            - { match: { dst: ${ip(p)}/${len} }, out: ${2 + (r() % FIB_NEXT_HOPS)} }`);
  }
  return rows;
}

/** The value/mask pairs that cover lo..hi of a 16-bit field (a range as a TCAM holds it: a few masked patterns). */
export function rangeMasks(lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  for (let at = lo; at <= hi;) {
    let size = 1;
    while (size < 0x10000 && at % (size * 2) === 0 && at + size * 2 - 1 <= hi) size *= 2;
    out.push([at, 0xffff & ~(size - 1)]);
    at += size;
  }
  return out;
}

const WELL_KNOWN_PORTS = [22, 25, 53, 80, 123, 443, 993, 3389, 5060, 8080];

/**
 * An ACL of `rows` ternary rows as operators write them (rules from source and destination prefixes, a protocol and
 * a destination port, a single one or a range), each rule as the rows a TCAM holds it in: a port range is written
 * as the masked patterns that cover it (rangeMasks), one row each, since a ternary table takes no range on a field
 * other rows mask. Permit rules go to the forward table, deny rules to the receive table, which delivers only what is
 * addressed to the router (so the rest is dropped); a header no rule takes is dropped (the implicit deny).
 */
function aclRows(rows: number, r: () => number): string[] {
  const out: string[] = [];
  while (out.length < rows) {
    const parts: string[] = [];
    if (r() % 2 === 0) {
      const len = [16, 24, 24, 28, 32][r() % 5] ?? 24;
      parts.push(`src: ${ip((((10 << 24) | (r() & 0xffffff)) & prefixMask(len)) >>> 0)}/${len}`);
    }
    if (r() % 10 < 7) {
      const len = [16, 20, 24, 24, 32][r() % 5] ?? 24;
      parts.push(`dst: ${ip(((((1 + (r() % 223)) << 24) | (r() & 0xffffff)) & prefixMask(len)) >>> 0)}/${len}`);
    }
    const proto = [6, 6, 6, 6, 6, 6, 17, 17, 17, 0][r() % 10] ?? 6;
    if (proto !== 0) parts.push(`proto: ${proto}`);
    const action = r() % 100 < 65 ? "forward" : "receive";
    const kind = proto === 0 ? 2 : r() % 10;
    const ports: [number, number][] =
      kind < 4
        ? [[WELL_KNOWN_PORTS[r() % WELL_KNOWN_PORTS.length] ?? 80, 0xffff]]
        : kind < 7
          ? (() => {
              const lo = 1024 + (r() % 60000);
              return rangeMasks(lo, Math.min(0xffff, lo + (r() % 5000)));
            })()
          : [[0, 0]];
    for (const [value, mask] of ports) {
      if (out.length === rows) break;
      const port = mask === 0 ? [] : [`dport: "${value}&&&${mask}"`];
      out.push(`            - { match: { ${[...parts, ...port].join(", ")} }, do: ${action} }`);
    }
  }
  return out;
}

/**
 * An IPv4 router r with a FIB of `prefixes` routes (kind: lpm) to FIB_NEXT_HOPS neighbours, and a default route to
 * the first; its acquire table an ACL of `acl` ternary rows (aclRows; none: it forwards everything not addressed to
 * it). A host h1 on r.1 sends. `within`: the routes' prefixes all in one block of that length (fibRows), nested.
 */
export function fibRouter(prefixes: number, acl: number, seed = 3, within = 0): string {
  const r = random(seed);
  const hops = Array.from({ length: FIB_NEXT_HOPS }, (_, i) => i + 1);
  const out = [
    "networks:",
    "  ip:",
    "    header: ipv4",
    "    ttl: decrement",
    "    members:",
    "      h1: { name: 10.0.0.1 }",
    ...hops.map((i) => `      n${i}: { name: 10.0.${i}.1 }`),
    "      r: { name: 10.0.0.254 }",
    "    links:",
    "      - { from: h1.1, to: r.1, mode: two-way }",
    ...hops.map((i) => `      - { from: r.${i + 1}, to: n${i}.1, mode: two-way }`),
    "    tables:",
    "      h1:",
    "        forward: [ { in: self, out: 1 } ]",
    ...hops.flatMap((i) => [
      `      n${i}:`,
      "        acquire: [ { do: receive } ]",
      "        receive: [ { do: deliver } ]",
    ]),
    "      r:",
    "        receive: [ { match: { dst: 10.0.0.254 }, do: deliver } ]",
    "        acquire:",
    `          kind: ${acl === 0 ? "optional" : "ternary"}`,
    "          rows:",
    "            - { match: { dst: 10.0.0.254 }, do: receive }",
    ...(acl === 0 ? ["            - { do: forward }"] : aclRows(acl, r)),
    "        forward:",
    "          kind: lpm",
    "          rows:",
    ...fibRows(prefixes, r, within),
    "            - { out: 2 }",
  ];
  return `${out.join("\n")}\n`;
}
