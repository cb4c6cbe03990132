// machineRequirements: per machine, its tables (P4 name, kind, key bits, size,
// entries), multicast groups and action selectors, read off the compiled description.

import { describe, expect, test } from "vitest";
import { compile } from "../../src/control/compile.js";
import { machineRequirements, p4TableName } from "../../src/p4/requirements.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";

/** A machine's requirements in one line per part, easy to read in a table of cases. */
function brief(file: string, text?: string): Record<string, string[]> {
  const spec = text === undefined ? loadSpec(file) : parseSpec(text, file);
  const out: Record<string, string[]> = {};
  for (const m of machineRequirements(compile(spec))) {
    out[m.machine] = [
      `members ${m.members.join(" ")}`,
      ...m.tables.map(
        (t) =>
          `${t.name} ${t.kind} ${t.fields.map((f) => `${f.name}:${f.bits}`).join("+") || "-"}=${t.keyBits} ` +
          `${t.entries}/${t.size}`,
      ),
      ...m.multicastGroups.map(
        (g) =>
          `mcast ${g.source} ${g.member} [${g.ports.join(",")}] ` +
          `x${g.replicas}${g.link === undefined ? "" : ` ${g.link}`}`,
      ),
      ...m.actionSelectors.map((s) => `selector ${s.member} ${s.link} ${s.groupSize}`),
    ];
    expect(m.tableCount).toBe(m.tables.length);
  }
  return out;
}

const GROUPS = `
networks:
  net-a:
    header: ipv4
    members:
      s:  { name: 10.0.0.1 }
      r1: { name: 10.0.0.2 }
      r2: { name: 10.0.0.3 }
      r3: { name: 10.0.0.4 }
    links:
      - { from: s.1, to: [r1.1, r2.1, r3.1], mode: allcast, group: all }
      - { from: s.2, to: [r1.2, r2.2], mode: anycast, group: any }
      - { from: s.3, to: r3.3 }
    tables:
      s:
        acquire: { kind: ternary, capacity: 64, rows: [ { match: { dst: 10.0.0.0/8 }, do: forward } ] }
        forward:
          - { match: { dst: 10.0.0.2, dport: 0..1023 }, out: [3, 1] }
          - { match: { dst: 10.0.0.3 }, out: [1, 3] }
          - { match: { dst: 10.0.0.4 }, out: [2, 3, 1] }
          - { match: { dst: 10.0.0.5 }, out: 2 }
`;

describe("machineRequirements", () => {
  test.each([
    {
      name: "hub: in-link 16 + dst 48 bits; one multicast group per distinct out-link set",
      file: "test/fixtures/specs/hub.yaml",
      machine: "hub",
      want: [
        "members lan.hub",
        "lan_hub_acquire exact -=0 1/1024",
        "lan_hub_forward optional in:16+dst:48=64 6/1024",
        "lan_hub_transmit exact out:16=16 3/1024",
        "mcast forward lan.hub [2,3] x2",
        "mcast forward lan.hub [1,3] x2",
        "mcast forward lan.hub [1,2] x2",
      ],
    },
    {
      name: "a host: send is keyed by the 32-bit session",
      file: "test/fixtures/specs/hub.yaml",
      machine: "h1",
      want: [
        "members lan.h1",
        "lan_h1_acquire exact in:16+dst:48=64 2/1024",
        "lan_h1_forward exact in:16=16 1/1024",
        "lan_h1_receive exact -=0 1/1024",
        "lan_h1_transmit exact out:16=16 1/1024",
        "lan_h1_send exact session:32=32 3/1024",
      ],
    },
    {
      name: "a layered machine hosts a member of each network",
      file: "examples/ip-router/network.yaml",
      machine: "r",
      want: [
        "members lanA.r lanB.r ip.r",
        "lanA_r_acquire exact dst:48=48 1/1024",
        "lanA_r_forward exact in:16=16 1/1024",
        "lanA_r_receive exact type:16=16 1/1024",
        "lanA_r_transmit exact out:16=16 1/1024",
        "lanA_r_send exact session:32=32 1/1024",
        "lanB_r_acquire exact dst:48=48 1/1024",
        "lanB_r_forward exact in:16=16 1/1024",
        "lanB_r_receive exact type:16=16 1/1024",
        "lanB_r_transmit exact out:16=16 1/1024",
        "lanB_r_send exact session:32=32 1/1024",
        "ip_r_acquire optional dst:32=32 2/1024",
        "ip_r_forward lpm dst:32=32 2/1024",
        "ip_r_receive exact -=0 1/1024",
        "ip_r_transmit exact out:16=16 2/1024",
      ],
    },
    {
      name:
        "groups: allcast → a multicast group, anycast → a selector of its " +
        "receivers; sets dedup in any order; capacity is the size",
      file: "groups.yaml",
      text: GROUPS,
      machine: "s",
      want: [
        "members net-a.s",
        "net_a_s_acquire ternary dst:32=32 1/64",
        "net_a_s_forward range dst:32+dport:16=48 4/1024",
        "net_a_s_transmit exact out:16=16 3/1024",
        "mcast forward net-a.s [1,3] x2",
        "mcast forward net-a.s [1,2,3] x3",
        "mcast allcast net-a.s [1] x3 net-a.s.1-all",
        "selector net-a.s net-a.s.2-any 2",
      ],
    },
  ])("$name", ({ file, text, machine, want }) => {
    expect(brief(file, text)[machine]).toEqual(want);
  });

  test("names that meet on one machine get _2 (network a_b member c, network a member b_c)", () => {
    const text = `
networks:
  a_b:
    header: cna
    members: { c: { name: 1, machine: box } }
    tables: { c: { acquire: [ { do: receive } ] } }
  a:
    header: cna
    members: { b_c: { name: 2, machine: box } }
    tables: { b_c: { acquire: [ { do: receive } ] } }
`;
    const names = machineRequirements(compile(parseSpec(text, "clash.yaml")))[0]?.tables.map((t) => t.name);
    expect(names).toEqual(["a_b_c_acquire", "a_b_c_transmit", "a_b_c_acquire_2", "a_b_c_transmit_2"]);
  });

  test("one entry per machine, in the order machines first appear", () => {
    expect(Object.keys(brief("examples/vxlan/network.yaml"))).toEqual(["a", "b", "sw"]);
  });

  test.each([
    { network: "lan", member: "h1", role: "acquire" as const, want: "lan_h1_acquire" },
    { network: "lan-a", member: "sw.1", role: "send" as const, want: "lan_a_sw_1_send" },
  ])("p4TableName($network, $member, $role) = $want", ({ network, member, role, want }) => {
    expect(p4TableName(network, member, role)).toBe(want);
  });
});
