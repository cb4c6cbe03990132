// Descriptions made to size for the analysis's budget and hop-count tests:
// IPv4 in IPv4 stacked `layers` deep, and Ethernet hubs and leaf-spines of any
// number of members; the ternary ACL, the edge router and the FIB router are the bench's
// (bench/analysis-descriptions.ts). Each is YAML text, the same for the same
// arguments, to be written to a file or parsed.

export { edgeRouter, fibRouter, ternaryAcl } from "../../../bench/analysis-descriptions.js";

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
