// The descriptions the benchmarks run: an exact-match switch, a hub and spokes, a fat tree, an IPv4 router layered
// on two LANs, VXLAN between two VTEPs; each written as YAML a size at a time.

export const mac = (i: number): string =>
  ["02", "00", (i >>> 24) & 0xff, (i >>> 16) & 0xff, (i >>> 8) & 0xff, i & 0xff]
    .map((b) => (typeof b === "string" ? b : b.toString(16).padStart(2, "0")))
    .join(":");

/** A switch `sw` with 1,024 exact dst rows spread over 4 external out-links, fed from outside. */
export function l2ExactSpec(entries = 1024, ports = 4): string {
  const rows = Array.from(
    { length: entries },
    (_, i) => `          - { match: { dst: "${mac(i + 1)}" }, out: ${(i % ports) + 1} }`,
  );
  const out = Array.from({ length: ports }, (_, p) => `      - { from: sw.${p + 1}, external: out${p + 1} }`);
  return `networks:
  lan:
    header: ethernet
    members:
      sw: { name: "02:00:ff:ff:ff:fe", role: infra }
    links:
      - { external: feed, to: sw.0, record: false }
${out.join("\n")}
    tables:
      sw:
        acquire: [ { do: forward } ]
        forward:
${rows.join("\n")}
`;
}

/** Hub and spoke with `n` spokes: the hub forwards by dst, each spoke receives its own frames. */
export function hubSpec(n: number): string {
  const hosts = Array.from({ length: n }, (_, i) => `      h${i + 1}: { name: "${mac(i + 1)}" }`);
  const links = Array.from({ length: n }, (_, i) => `      - { from: h${i + 1}.1, to: hub.${i + 1}, mode: two-way }`);
  const fwd = Array.from({ length: n }, (_, i) => `          - { match: { dst: "${mac(i + 1)}" }, out: ${i + 1} }`);
  const hostTables = Array.from(
    { length: n },
    (_, i) =>
      `      h${i + 1}:\n        acquire: [ { match: { dst: "${mac(i + 1)}" }, do: receive } ]\n` +
      `        receive: [ { do: deliver } ]`,
  );
  return `networks:
  lan:
    header: ethernet
    members:
      hub: { name: "02:00:ff:ff:ff:fe", role: infra }
${hosts.join("\n")}
    links:
${links.join("\n")}
    tables:
      hub:
        acquire: [ { do: forward } ]
        forward:
${fwd.join("\n")}
${hostTables.join("\n")}
`;
}

/**
 * A three-tier tree of Ethernet switches: `pods` aggregation switches under one
 * core, `edges` edge switches per pod, `hosts` hosts per edge switch (1,169
 * members with the defaults). Each switch forwards by dst: the core by an exact
 * row per host, an aggregation or edge switch by a row per host below it, then
 * a catch-all row up. Hosts receive their own frames.
 */
export function fatTreeSpec(pods = 16, edges = 8, hosts = 8): { yaml: string; hosts: number; hostsPerPod: number } {
  const nHosts = pods * edges * hosts;
  const hostPerPod = edges * hosts;
  const sw = (k: number): string => mac(0x01000000 + k);
  const members: string[] = [`      core: { name: "${sw(0)}", role: infra }`];
  const links: string[] = [];
  const tables: string[] = [];
  const coreRows: string[] = [];
  for (let p = 0; p < pods; p++) {
    members.push(`      a${p + 1}: { name: "${sw(1 + p)}", role: infra }`);
    links.push(`      - { from: a${p + 1}.${edges + 1}, to: core.${p + 1}, mode: two-way }`);
    const aggRows: string[] = [];
    for (let e = 0; e < edges; e++) {
      const ge = p * edges + e;
      members.push(`      e${ge + 1}: { name: "${sw(1 + pods + ge)}", role: infra }`);
      links.push(`      - { from: e${ge + 1}.${hosts + 1}, to: a${p + 1}.${e + 1}, mode: two-way }`);
      const edgeRows: string[] = [];
      for (let h = 0; h < hosts; h++) {
        const n = ge * hosts + h + 1;
        members.push(`      h${n}: { name: "${mac(n)}" }`);
        links.push(`      - { from: h${n}.1, to: e${ge + 1}.${h + 1}, mode: two-way }`);
        tables.push(
          `      h${n}:\n        acquire: [ { match: { dst: "${mac(n)}" }, do: receive } ]\n` +
            `        receive: [ { do: deliver } ]`,
        );
        edgeRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${h + 1} }`);
        aggRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${e + 1} }`);
        coreRows.push(`          - { match: { dst: "${mac(n)}" }, out: ${p + 1} }`);
      }
      edgeRows.push(`          - { out: ${hosts + 1} }`);
      tables.push(`      e${ge + 1}:\n        acquire: [ { do: forward } ]\n        forward:\n${edgeRows.join("\n")}`);
    }
    aggRows.push(`          - { out: ${edges + 1} }`);
    tables.push(`      a${p + 1}:\n        acquire: [ { do: forward } ]\n        forward:\n${aggRows.join("\n")}`);
  }
  tables.push(`      core:\n        acquire: [ { do: forward } ]\n        forward:\n${coreRows.join("\n")}`);
  const yaml = `networks:
  lan:
    header: ethernet
    members:
${members.join("\n")}
    links:
${links.join("\n")}
    tables:
${tables.join("\n")}
`;
  return { yaml, hosts: nHosts, hostsPerPod: hostPerPod };
}

/**
 * An IPv4 router layered on two Ethernet LANs (examples/ip-router, with `prefixes`
 * /24 routes): frames arrive from outside on lanA, lanA.r pops Ethernet into ip,
 * ip.r matches the longest prefix, lowers the TTL and transmits on the virtual
 * link implemented by lanB's session, lanB.r pushes Ethernet and the frame
 * leaves on lanB's external link.
 */
export function routerSpec(prefixes = 1024): string {
  const routes = Array.from(
    { length: prefixes },
    (_, i) => `            - { match: { dst: 10.${(i >>> 8) & 0xff}.${i & 0xff}.0/24 }, out: 2 }`,
  );
  return `networks:
  lanA:
    header: ethernet
    members:
      r: { name: "02:00:00:00:0a:fe" }
    links: [ { external: feed, to: r.1, record: false } ]
    tables:
      r:
        acquire: [ { match: { dst: "02:00:00:00:0a:fe" }, do: receive } ]
        receive: [ { match: { type: 0x0800 }, do: { link: ip.1 } } ]
  lanB:
    header: ethernet
    members:
      r: { name: "02:00:00:00:0b:fe" }
    links: [ { from: r.1, external: out, record: false } ]
    tables:
      r:
        send: [ { session: 1, header: { dst: "02:00:00:00:0b:02", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
  ip:
    header: ipv4
    ttl: decrement
    members:
      r: { name: 10.255.255.254 }
      h2: { name: 10.255.255.2 }
    links:
      - { external: from-lanA, to: r.1, record: false }
      - { from: r.2, to: h2.1, record: false }
    tables:
      r:
        acquire: [ { do: forward } ]
        forward:
          kind: lpm
          rows:
${routes.join("\n")}
        transmit: [ { out: 2, via: { session: lanB.1 } } ]
`;
}

/**
 * VXLAN between two VTEPs (examples/vxlan without the switch): tenant frames
 * sent by vm3 are encapsulated twice at machine a (VXLAN, then Ethernet),
 * cross the LAN, and are decapsulated twice at b up to delivery to vm5.
 */
export function vxlanSpec(): string {
  return `networks:
  lan:
    header: ethernet
    members:
      a: { name: "02:00:00:00:00:0a" }
      b: { name: "02:00:00:00:00:0b" }
    links: [ { from: a.1, to: b.1, record: false } ]
    tables:
      a:
        send:    [ { session: 1, header: { dst: "02:00:00:00:00:0b", type: 0x0800 } } ]
        forward: [ { in: self, out: 1 } ]
      b:
        acquire: [ { match: { dst: "02:00:00:00:00:0b" }, do: receive } ]
        receive: [ { match: { type: 0x0800 }, do: { link: overlay.1 } } ]
  overlay:
    header: vxlan
    members:
      a: { name: 192.0.2.1 }
      b: { name: 192.0.2.2 }
    links: [ { from: a.1, to: b.1, record: false } ]
    tables:
      a:
        send:     [ { session: 1, header: { dst: 192.0.2.2, sport: 49152, vni: 100 } } ]
        forward:  [ { in: self, out: 1 } ]
        transmit: [ { out: 1, via: { session: lan.1 } } ]
      b:
        acquire: [ { match: { dst: 192.0.2.2, dport: 4789 }, do: receive } ]
        receive: [ { match: { vni: 100 }, do: { link: tenant.1 } } ]
  tenant:
    header: ethernet
    members:
      vm3: { name: "02:00:00:00:01:03", machine: a }
      vm5: { name: "02:00:00:00:01:05", machine: b }
    links: [ { from: vm3.1, to: vm5.1, record: false } ]
    tables:
      vm3:
        forward:  [ { in: self, out: 1 } ]
        transmit: [ { out: 1, via: { session: overlay.1 } } ]
      vm5:
        acquire: [ { match: { dst: "02:00:00:00:01:05" }, do: receive } ]
        receive: [ { do: deliver } ]
`;
}
