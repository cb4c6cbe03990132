// Plans: what a member's tables make of every packet it acquires, found once
// per batch instead of once per packet.
//
// Most members are one of two shapes: a switch or router that forwards every
// packet it acquires (a keyless acquire row `forward`) onto a physical link,
// or a host that delivers every packet it receives (a keyless receive row
// `deliver`). For such a member the fast lane (steps.ts) takes the member's
// steps with the checks that depend only on the tables made once, when the
// member is first met in a batch: the plan. What depends on the packet (its
// header, the forward row it finds) is still checked for every packet, and a
// packet that does not fit the plan goes the lane's ordinary way.
//
// Tables and members change only between batches (control calls), so a plan
// lives for one batch: it carries the batch's epoch, and a plan of an earlier
// epoch is made again. Nothing has to remember to throw plans away.
//
//   Member.plan:  ┌────────────────────┬─────────┐
//                 │ epoch: 24 bits     │ PLAN_*  │
//                 └────────────────────┴─────────┘
//
// What a plan needs of a transmit table's rows (are they all physical?) lasts
// longer, until the next table write, and costs a pass over the rows (a hub's
// transmit table has a row per spoke): it is kept here, beside the tables, a
// record by table id. The table holds its entries, and nothing of the plans.
//
//   physical, by table id:  ┌──────────────────────┬───────────────┐
//                           │ at u32: tableWrites  │ all u32: 0, 1 │
//                           └──────────────────────┴───────────────┘
//
// `at` is the table write after which `all` was found (0: not looked at).

import { ACT_DELIVER, ACT_FORWARD, ACT_PHYSICAL } from "../abi";
import { entryAt, FREE, ROAD_DIRECT, ROAD_DIRECT32, ROAD_SINGLE, singleRow, Table } from "../tables/table";
import { registrySize, tableWrites } from "../tables/write";
import { Member, MEMBER_DOWN, MEMBER_TTL, memberAt, nMembers } from "./topology";

/** No plan: the lane's steps, each with all its checks. */
export const PLAN_NONE: u32 = 0;
/**
 * Forwards: up, no TTL side effect; its acquire table is keyless and its one
 * row says forward; it has a forward table; its transmit table goes by the
 * direct index and every row of it is physical.
 */
export const PLAN_FORWARD: u32 = 1;
/** Delivers: up; it has an acquire table; its receive table is keyless and its one row says deliver. */
export const PLAN_DELIVER: u32 = 2;

let epoch: u32 = 1;

/** What is known of each table's rows being physical (the layout above), and for how many table ids. */
let physical: usize = 0;
let physicalIds: i32 = 0;
const PHYSICAL_LEN: i32 = 8;

/** A new batch: the tables may have changed since the last one. */
export function plansExpire(): void {
  coverTables();
  epoch = (epoch + 1) & 0xffffff;
  if (epoch != 0) return;
  // The epoch went round: no plan made 2^24 batches ago may pass for a new one.
  for (let i = 0; i < nMembers; i++) memberAt(i).plan = 0;
  epoch = 1;
}

/** Member m's plan (PLAN_*) for this batch. */
@inline export function planOf(m: Member): u32 {
  const p = m.plan;
  if (p >> 8 == epoch) return p & 0xff;
  return plan(m);
}

function plan(m: Member): u32 {
  const made = planFor(m);
  m.plan = (epoch << 8) | made;
  return made;
}

function planFor(m: Member): u32 {
  if (m.flags & MEMBER_DOWN || m.acquire == 0) return PLAN_NONE;
  if (keylessRow(m.acquire) == ACT_FORWARD) {
    if (m.flags & MEMBER_TTL || m.forward == 0 || m.transmit == 0) return PLAN_NONE;
    const t = changetype<Table>(m.transmit);
    if (t.road != ROAD_DIRECT && t.road != ROAD_DIRECT32) return PLAN_NONE;
    return allPhysical(t) ? PLAN_FORWARD : PLAN_NONE;
  }
  return m.receive != 0 && keylessRow(m.receive) == ACT_DELIVER ? PLAN_DELIVER : PLAN_NONE;
}

/** Room in `physical` for every table id there may be, before a batch: nothing is allocated while packets run. */
function coverTables(): void {
  const ids = registrySize;
  if (ids <= physicalIds) return;
  const grown = heap.alloc(<usize>(ids * PHYSICAL_LEN));
  memory.fill(grown, 0, <usize>(ids * PHYSICAL_LEN));
  if (physical != 0) {
    memory.copy(grown, physical, <usize>(physicalIds * PHYSICAL_LEN));
    heap.free(physical);
  }
  physical = grown;
  physicalIds = ids;
}

/**
 * Whether every row of transmit table t is physical: looked at once after each table write,
 * not in every batch.
 */
function allPhysical(t: Table): bool {
  // A table made since the batch began has no record yet: it is looked at, and nothing kept.
  const kept = t.id < physicalIds;
  const p = physical + <usize>(t.id * PHYSICAL_LEN);
  if (kept && load<u32>(p) == tableWrites) return load<u32>(p, 4) != 0;
  let all = true;
  for (let i = 0; i < t.allocated && all; i++) {
    const e = entryAt(t, i);
    if (e.group != FREE && e.code != ACT_PHYSICAL) all = false;
  }
  if (kept) {
    store<u32>(p, tableWrites);
    store<u32>(p, all ? 1 : 0, 4);
  }
  return all;
}

/** The action of keyless table `table`'s one row, or −1 when the table has keys or no row. */
function keylessRow(table: usize): i32 {
  const t = changetype<Table>(table);
  return t.road == ROAD_SINGLE && singleRow(t) >= 0 ? <i32>entryAt(t, singleRow(t)).code : -1;
}
