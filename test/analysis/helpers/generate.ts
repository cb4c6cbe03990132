// Descriptions made to size for the analysis's budget and hop-count tests:
// IPv4 in IPv4 stacked `layers` deep, a ternary ACL of random masks, an edge
// router (a ternary ACL, a range table and LPM routes), and Ethernet hubs and
// leaf-spines of any number of members. Each is YAML text, the same for the
// same arguments (a seeded generator), to be written to a file or parsed.

/** A small seeded generator (mulberry32): the same numbers for the same seed. */
function random(seed: number): () => number {
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
const hex = (n: number): string => n.toString(16).padStart(2, "0");

/**
 * Networks ip1…ipN of two members, a and b, on two machines: ipK+1 is carried in ipK (IP in IP, send `proto: 4`),
 * ip1 on the one physical link. A packet ipN's a sends to b crosses N links: ipN's, carried by ipN-1's, … by ip1's.
 */
export function ipInIp(layers: number): string {
  const out = ["networks:"];
  for (let k = 1; k <= layers; k++) {
    const a = `10.${k >> 8}.${k & 255}.1`;
    const b = `10.${k >> 8}.${k & 255}.2`;
    out.push(`  ip${k}:`, "    header: ipv4", "    members:", `      a: { name: ${a} }`, `      b: { name: ${b} }`);
    out.push("    links:", "      - { from: a.1, to: b.1, mode: two-way }", "    tables:");
    for (const [m, me, peer] of [
      ["a", a, b],
      ["b", b, a],
    ] as const) {
      out.push(`      ${m}:`, `        acquire: [ { match: { dst: ${me} }, do: receive } ]`);
      out.push(
        k === layers
          ? "        receive: [ { do: deliver } ]"
          : `        receive: [ { match: { proto: 4 }, do: { link: ip${k + 1}.1 } } ]`,
      );
      out.push("        forward: [ { in: self, out: 1 } ]");
      if (k > 1) out.push(`        transmit: [ { out: 1, via: { session: ip${k - 1}.1 } } ]`);
      if (k < layers)
        out.push(`        send: [ { session: 1, header: { src: ${me}, dst: ${peer}, proto: 4, ttl: 64 } } ]`);
    }
  }
  return `${out.join("\n")}\n`;
}

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

/** A host on Ethernet: it takes what is addressed to it, and sends on its one link. */
function host(name: string, mac: string): string[] {
  return [
    `      ${name}:`,
    `        acquire: [ { match: { dst: "${mac}" }, do: receive } ]`,
    "        receive: [ { do: deliver } ]",
    "        forward: [ { in: self, out: 1 } ]",
  ];
}

const hostMac = (a: number, b: number): string => `02:00:00:${hex(a >> 8)}:${hex(a & 255)}:${hex(b)}`;

/** A hub and `members − 1` hosts, each on a link of its own to the hub, which forwards by destination address. */
export function hub(members: number): string {
  const hosts = members - 1;
  const out = [
    "networks:",
    "  lan:",
    "    header: ethernet",
    "    members:",
    '      hub: { name: "02:ff:00:00:00:fe" }',
  ];
  for (let i = 1; i <= hosts; i++) out.push(`      h${i}: { name: "${hostMac(i, 1)}" }`);
  out.push("    links:");
  for (let i = 1; i <= hosts; i++) out.push(`      - { from: h${i}.1, to: hub.${i}, mode: two-way }`);
  out.push("    tables:", "      hub:", "        acquire: [ { do: forward } ]", "        forward:");
  for (let i = 1; i <= hosts; i++) out.push(`          - { match: { dst: "${hostMac(i, 1)}" }, out: ${i} }`);
  for (let i = 1; i <= hosts; i++) out.push(...host(`h${i}`, hostMac(i, 1)));
  return `${out.join("\n")}\n`;
}

/**
 * A leaf-spine of about `members` members: 8 spines, leaves of 50 hosts each. A leaf sends what is for its hosts to
 * them and the rest up to one spine by the port it came in on; a spine sends each leaf's prefix (the hosts' addresses
 * carry their leaf) down to it.
 */
export function leafSpine(members: number): string {
  const spines = 8;
  const perLeaf = 50;
  const leaves = Math.max(2, Math.round((members - spines) / (perLeaf + 1)));
  const out = ["networks:", "  lan:", "    header: ethernet", "    members:"];
  for (let s = 1; s <= spines; s++) out.push(`      s${s}: { name: "02:fe:00:00:00:${hex(s)}" }`);
  for (let l = 1; l <= leaves; l++) out.push(`      l${l}: { name: "02:fd:00:00:${hex(l >> 8)}:${hex(l & 255)}" }`);
  for (let l = 1; l <= leaves; l++)
    for (let h = 1; h <= perLeaf; h++) out.push(`      h${l}x${h}: { name: "${hostMac(l, h)}" }`);
  out.push("    links:");
  for (let l = 1; l <= leaves; l++) {
    for (let s = 1; s <= spines; s++) out.push(`      - { from: l${l}.${100 + s}, to: s${s}.${l}, mode: two-way }`);
    for (let h = 1; h <= perLeaf; h++) out.push(`      - { from: h${l}x${h}.1, to: l${l}.${h}, mode: two-way }`);
  }
  out.push("    tables:");
  for (let s = 1; s <= spines; s++) {
    out.push(`      s${s}:`, "        acquire: [ { do: forward } ]", "        forward:");
    for (let l = 1; l <= leaves; l++) out.push(`          - { match: { dst: "${hostMac(l, 0)}/40" }, out: ${l} }`);
  }
  for (let l = 1; l <= leaves; l++) {
    out.push(`      l${l}:`, "        acquire: [ { do: forward } ]", "        forward:");
    for (let h = 1; h <= perLeaf; h++) out.push(`          - { match: { dst: "${hostMac(l, h)}" }, out: ${h} }`);
    for (let h = 1; h <= perLeaf; h++) out.push(`          - { in: ${h}, out: ${100 + 1 + (h % spines)} }`);
    for (let h = 1; h <= perLeaf; h++) out.push(...host(`h${l}x${h}`, hostMac(l, h)));
  }
  return `${out.join("\n")}\n`;
}
