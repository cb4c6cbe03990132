// Members and links in flat memory, set up by the control plane before a run.
//
// A member (one per network member; members of different networks on one
// machine share `machine`):
//
//   ┌─────────────┬─────────────┬────────────┬───────────┬──────────────────────────────────┐
//   │ network i32 │ machine i32 │ design i32 │ flags u32 │ tables: usize × 5 (ROLE_* order) │
//   ├─────────────┴─────────────┴────────────┴───────────┴──────────────────────────────────┤
//   │ outLinks usize (i32 link per out-link identifier, −1 none) │ nOutLinks i32            │
//   │ drops usize (u64 × DROP_COUNT) │ delivered u64 │ recordingId i32 │ plan u32           │
//   └───────────────────────────────────────────────────────────────────────────────────────┘
//
// A link (one-way; a two-way link is two of them):
//
//   ┌─────────────┬────────────┬───────────────────┬──────────┬────────────────┬───────────────────────────────┐
//   │ network i32 │ sender i32 │ senderOutLink u32 │ mode i32 │ nReceivers i32 │ receivers usize: (member i32, │
//   │             │ (−1 = ext) │                   │          │ (0 = external) │ inLink u32) × nReceivers      │
//   └─────────────┴────────────┴───────────────────┴──────────┴────────────────┴───────────────────────────────┘
//   ┌──────────────┬────────────┬─────────────┬───────────┬─────────────┬──────────┬─────────┐
//   │ recorded i32 │ design i32 │ packets u64 │ bytes u64 │ recordingId │ down u32 │ pad u64 │
//   └──────────────┴────────────┴─────────────┴───────────┴─────────────┴──────────┴─────────┘

import {
  DROP_COUNT,
  INJECT_LINK,
  INJECT_SESSION,
  LINK_NONE,
  LINK_SELF,
  ROLE_COUNT,
  STAGE_FORWARD,
  STAGE_LINK,
  STAGE_SEND,
} from "../abi";
import { Table } from "../tables/table";
import { tableById } from "../tables/write";

export const MEMBER_TTL: u32 = 1; // forwarding decrements TTL / hop limit
export const MEMBER_DOWN: u32 = 2; // down: drops what reaches it and what it would send (memberSetDown)
export const MEMBER_TAG_DELIVERIES: u32 = 4; // deliveries' records carry the in-link (recording.ts)

@unmanaged
export class Member {
  network: i32;
  machine: i32;
  design: i32;
  flags: u32;
  acquire: usize;
  forward: usize;
  transmit: usize;
  send: usize;
  receive: usize;
  outLinks: usize;
  nOutLinks: i32;
  drops: usize;
  delivered: u64;
  /** The recording its deliveries go to (recording.ts), −1 none. */
  recordingId: i32;
  /** What its tables make of every packet, for this batch (plan.ts). It brings the record to 64 bytes: an address is a
   * shift. */
  plan: u32;
}

@unmanaged
export class Link {
  network: i32;
  sender: i32;
  senderOutLink: u32;
  mode: i32;
  nReceivers: i32;
  receivers: usize;
  recorded: i32;
  design: i32;
  packets: u64;
  bytes: u64;
  /** The recording its packets go to (recording.ts), −1 none. */
  recordingId: i32;
  /** Non-zero while the link is down: what is sent onto it is dropped (linkSetDown). */
  down: u32;
  /** To 64 bytes, as Member. */
  pad: u64;
}

/**
 * Where input packets enter: a link (as if transmitted on it), or a member
 * (sent by it, into a session or not). The fields are the ones a packet's
 * descriptor starts with there, worked out when the endpoint or its link is
 * set, so that loading a packet copies them and does not look at the kind.
 *
 *   ┌──────────┬────────────┬────────────┬─────────────┬──────────┬─────────────┬───────────┐
 *   │ kind i32 │ member i32 │ inLink u32 │ outLink u32 │ link i32 │ session u32 │ stage i32 │
 *   └──────────┴────────────┴────────────┴─────────────┴──────────┴─────────────┴───────────┘
 */
@unmanaged
export class Endpoint {
  kind: i32;
  /** The member the packet is at: the link's sender (−1 outside) for kind link. */
  member: i32;
  /** Its in-link there: LINK_SELF when the member sends it, else LINK_NONE. */
  inLink: u32;
  /** Its out-link: the sender's identifier on the link (kind link; LINK_NONE for a sender outside), else LINK_NONE. */
  outLink: u32;
  /** The link it is on (kind link), else −1. */
  link: i32;
  /** The session it is sent into (kind session), else 0. */
  session: u32;
  /** The step it starts with. */
  stage: i32;
}

export let members: usize = 0;
export let nMembers: i32 = 0;
export let links: usize = 0;
export let nLinks: i32 = 0;
export let endpoints: usize = 0;
export let nEndpoints: i32 = 0;
/** Drops of packets no member had yet (e.g. bad input on an external link), by reason. */
export let orphanDrops: usize = 0;

@inline export function memberAt(i: i32): Member {
  return changetype<Member>(members + <usize>i * offsetof<Member>());
}
@inline export function linkAt(i: i32): Link {
  return changetype<Link>(links + <usize>i * offsetof<Link>());
}
@inline export function endpointAt(i: i32): Endpoint {
  return changetype<Endpoint>(endpoints + <usize>i * offsetof<Endpoint>());
}
/** Link l's receiver `r`: the member, and the in-link it arrives on there. */
@inline export function receiverMember(l: Link, r: i32): i32 {
  return load<i32>(l.receivers + ((<usize>r) << 3));
}
@inline export function receiverInLink(l: Link, r: i32): u32 {
  return load<u32>(l.receivers + ((<usize>r) << 3), 4);
}
/** The link on member m's out-link identifier `id`, or −1. */
@inline export function outLink(m: Member, id: u32): i32 {
  return id < <u32>m.nOutLinks ? load<i32>(m.outLinks + ((<usize>id) << 2)) : -1;
}
@inline export function tableOf(m: Member, role: i32): Table | null {
  const p = load<usize>(changetype<usize>(m) + offsetof<Member>("acquire") + ((<usize>role) << alignof<usize>()));
  return p == 0 ? null : changetype<Table>(p);
}

function zeroed(size: usize): usize {
  const p = heap.alloc(size + 8);
  memory.fill(p, 0, size + 8);
  return p;
}

/** Frees `p` if it is not 0. */
function freeIf(p: usize): void {
  if (p != 0) heap.free(p);
}

/** Starts a new topology of `m` members, `l` links and `e` injection endpoints; the old one's memory is freed. */
export function topologyReset(m: i32, l: i32, e: i32): void {
  for (let i = 0; i < nMembers; i++) {
    freeIf(memberAt(i).outLinks);
    freeIf(memberAt(i).drops);
  }
  for (let i = 0; i < nLinks; i++) freeIf(linkAt(i).receivers);
  freeIf(members);
  freeIf(links);
  freeIf(endpoints);
  freeIf(orphanDrops);
  members = zeroed(<usize>m * offsetof<Member>());
  nMembers = m;
  links = zeroed(<usize>l * offsetof<Link>());
  nLinks = l;
  endpoints = zeroed(<usize>e * offsetof<Endpoint>());
  nEndpoints = e;
  orphanDrops = zeroed((<usize>DROP_COUNT) << 3);
}

/** Member `i`: its network, machine and design, and `nOutLinks` out-link identifiers (0 … nOutLinks−1). */
export function memberSet(i: i32, network: i32, machine: i32, design: i32, flags: u32, nOutLinks: i32): void {
  const m = memberAt(i);
  m.network = network;
  m.machine = machine;
  m.design = design;
  m.flags = flags;
  m.nOutLinks = nOutLinks;
  m.outLinks = zeroed((<usize>nOutLinks) << 2);
  for (let p = 0; p < nOutLinks; p++) store<i32>(m.outLinks + ((<usize>p) << 2), -1);
  m.drops = zeroed((<usize>DROP_COUNT) << 3);
  m.recordingId = -1;
}

/** Gives member `i` the table with id `table` in `role` (−1 = none). */
export function memberSetTable(i: i32, role: i32, table: i32): bool {
  if (role < 0 || role >= ROLE_COUNT) return false;
  const t: Table | null = table < 0 ? null : tableById(table);
  if (table >= 0 && t == null) return false;
  store<usize>(
    changetype<usize>(memberAt(i)) + offsetof<Member>("acquire") + ((<usize>role) << alignof<usize>()),
    t == null ? 0 : changetype<usize>(t),
  );
  return true;
}

/**
 * Link `i` from `sender` (−1 = outside) on its out-link identifier `outLink`, with `nReceivers` receivers
 * (0 = leaves the network).
 */
export function linkSet(
  i: i32,
  network: i32,
  design: i32,
  sender: i32,
  outLink: u32,
  mode: i32,
  nReceivers: i32,
  recorded: i32,
): void {
  const l = linkAt(i);
  l.network = network;
  l.design = design;
  l.sender = sender;
  l.senderOutLink = outLink;
  l.mode = mode;
  l.nReceivers = nReceivers;
  l.receivers = zeroed((<usize>nReceivers) << 3);
  l.recorded = recorded;
  l.recordingId = -1;
  l.down = 0;
  if (sender >= 0) {
    const m = memberAt(sender);
    if (<i32>outLink < m.nOutLinks) store<i32>(m.outLinks + ((<usize>outLink) << 2), i);
  }
  // Endpoints set before on this link start from its sender.
  for (let k = 0; k < nEndpoints; k++) {
    const e = endpointAt(k);
    if (e.kind == INJECT_LINK && e.link == i) endpointOnLink(e);
  }
}

/**
 * Member `i` transmits on link `link` with out-link identifier `outLink` too (the overlay's shared member,
 * subduction). The export's name is the control plane's (src/control/install.ts), kept until it is renamed there.
 */
export function memberSetOutLink(i: i32, outLink: u32, link: i32): void {
  const m = memberAt(i);
  if (<i32>outLink < m.nOutLinks) store<i32>(m.outLinks + ((<usize>outLink) << 2), link);
}

export function linkSetReceiver(i: i32, r: i32, member: i32, inLink: u32): void {
  const p = linkAt(i).receivers + ((<usize>r) << 3);
  store<i32>(p, member);
  store<u32>(p, inLink, 4);
}

/** Link `i`'s packets go to recording `c` (−1: none); a link not recorded has none (effects.ts carry tests only
 * this). */
export function linkSetRecording(i: i32, c: i32): void {
  const l = linkAt(i);
  l.recordingId = l.recorded != 0 ? c : -1;
}

/** Member `i`'s deliveries go to recording `c` (−1: none). */
export function memberSetRecording(i: i32, c: i32): void {
  memberAt(i).recordingId = c;
}

/** Member `i`'s delivery records carry the in-link each packet arrived on (recording.ts, tagged records), or not. */
export function memberTagDeliveries(i: i32, on: bool): void {
  const m = memberAt(i);
  m.flags = on ? m.flags | MEMBER_TAG_DELIVERIES : m.flags & ~MEMBER_TAG_DELIVERIES;
}

/** Room for `e` injection endpoints, keeping those set (a running emulation adds places packets enter). */
export function endpointsGrow(e: i32): void {
  if (e <= nEndpoints) return;
  const grown = zeroed(<usize>e * offsetof<Endpoint>());
  memory.copy(grown, endpoints, <usize>nEndpoints * offsetof<Endpoint>());
  heap.free(endpoints);
  endpoints = grown;
  nEndpoints = e;
}

/** Endpoint `i`: onto link `link` (INJECT_LINK), sent by `member` (INJECT_SELF) or into its session `arg`. */
export function endpointSet(i: i32, kind: i32, member: i32, arg: u32, link: i32): void {
  const e = endpointAt(i);
  e.kind = kind;
  if (kind == INJECT_LINK) {
    e.link = link;
    endpointOnLink(e);
    e.session = 0;
    e.stage = STAGE_LINK;
  } else {
    e.member = member;
    e.inLink = LINK_SELF;
    e.outLink = LINK_NONE;
    e.link = -1;
    e.session = kind == INJECT_SESSION ? arg : 0;
    e.stage = kind == INJECT_SESSION ? STAGE_SEND : STAGE_FORWARD;
  }
}

/** A packet put on e's link starts as if its sender had just transmitted it. */
function endpointOnLink(e: Endpoint): void {
  const l = linkAt(e.link);
  e.member = l.sender;
  e.inLink = LINK_NONE;
  e.outLink = l.sender >= 0 ? l.senderOutLink : LINK_NONE;
}

/** Takes link `i` down (`down` true) or up: a link that is down drops what is sent onto it (DROP_LINK_DOWN). */
export function linkSetDown(i: i32, down: bool): void {
  linkAt(i).down = down ? 1 : 0;
}

/** Takes member `i` down or up: a member that is down drops what reaches it and what it would send (DROP_MEMBER_DOWN).
 * */
export function memberSetDown(i: i32, down: bool): void {
  const m = memberAt(i);
  m.flags = down ? m.flags | MEMBER_DOWN : m.flags & ~MEMBER_DOWN;
}

@inline export function memberDown(m: Member): bool {
  return (m.flags & MEMBER_DOWN) != 0;
}
