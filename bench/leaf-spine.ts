// A dense leaf-spine, as a routed fabric is (issue 30): every leaf has a route
// to every other leaf's prefix, through the spines. For the analysis's scale
// scenario (bench/analysis-leaf-spine.ts) and its tests: the bench's fat-tree
// is sparse (a switch knows the hosts below it and sends the rest up), which is
// not what users analyse.

/** The shape: `spines` spines, `leaves` leaves, `hosts` hosts under each leaf. */
export interface LeafSpineShape {
  readonly spines: number;
  readonly leaves: number;
  readonly hosts: number;
}

/** Members of a leaf-spine of that shape. */
export const leafSpineMembers = (s: LeafSpineShape): number => s.spines + s.leaves + s.leaves * s.hosts;

/** A router's tables: it forwards what it acquires by the longest of these prefix rows. */
const router = (key: string, rows: readonly string[]): string =>
  `      ${key}:\n        acquire: [ { do: forward } ]\n` +
  `        forward:\n          kind: lpm\n          rows:\n${rows.join("\n")}`;

/** Leaf `i`'s /24 (i from 0): 10.x.y.0, i = 256x + y + 1, so no leaf has 10.0.0.0/24. */
const leafNet = (i: number): string => `10.${((i + 1) >>> 8) & 0xff}.${(i + 1) & 0xff}`;

/**
 * An IPv4 fabric (`ttl: decrement`, LPM routes): leaf `l<i>` has the /24 `10.x.y.0`, its hosts `h<i>-<j>` the
 * addresses `.1` upwards and the leaf `.254`; a host sends everything to its leaf. A leaf routes each host of its own
 * by a /32 and every other leaf's /24 up, on one anycast link to every spine (ECMP: each spine may take a packet); a
 * spine routes each leaf's /24 down to that leaf. Leaves and spines forward what they acquire; hosts receive what is
 * addressed to them. At most 65,534 leaves and 253 hosts a leaf.
 */
export function leafSpineSpec(shape: LeafSpineShape): string {
  const { spines, leaves, hosts } = shape;
  const up = hosts + 1;
  const members: string[] = [];
  const links: string[] = [];
  const tables: string[] = [];
  for (let k = 0; k < spines; k++)
    members.push(`      s${k + 1}: { name: 10.255.${k >>> 8}.${k & 0xff}, role: infra }`);
  const spineRows = Array.from(
    { length: leaves },
    (_, i) => `          - { match: { dst: ${leafNet(i)}.0/24 }, out: ${i + 2} }`,
  );
  for (let k = 0; k < spines; k++) tables.push(router(`s${k + 1}`, spineRows));
  for (let i = 0; i < leaves; i++) {
    const net = leafNet(i);
    members.push(`      l${i + 1}: { name: ${net}.254, role: infra }`);
    const spinesIn = Array.from({ length: spines }, (_, k) => `s${k + 1}.1`).join(", ");
    links.push(`      - { from: l${i + 1}.${up}, to: [${spinesIn}], mode: anycast, group: spines }`);
    for (let k = 0; k < spines; k++) links.push(`      - { from: s${k + 1}.${i + 2}, to: l${i + 1}.${up + 1 + k} }`);
    const rows: string[] = [];
    for (let j = 0; j < hosts; j++) {
      const h = `h${i + 1}-${j + 1}`;
      members.push(`      ${h}: { name: ${net}.${j + 1} }`);
      links.push(`      - { from: ${h}.1, to: l${i + 1}.${j + 1}, mode: two-way }`);
      tables.push(
        `      ${h}:\n        forward: [ { in: self, out: 1 } ]\n` +
          `        acquire: [ { match: { dst: ${net}.${j + 1} }, do: receive } ]\n        receive: [ { do: deliver } ]`,
      );
      rows.push(`          - { match: { dst: ${net}.${j + 1}/32 }, out: ${j + 1} }`);
    }
    for (let o = 0; o < leaves; o++)
      if (o !== i) rows.push(`          - { match: { dst: ${leafNet(o)}.0/24 }, out: ${up} }`);
    tables.push(router(`l${i + 1}`, rows));
  }
  return `networks:
  fabric:
    header: ipv4
    ttl: decrement
    members:
${members.join("\n")}
    links:
${links.join("\n")}
    tables:
${tables.join("\n")}
`;
}
