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
