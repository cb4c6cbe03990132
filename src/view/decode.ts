// A packet's bytes as the page shows them, like a protocol analyser's packet details: the
// headers of the designs strata knows, outermost first, each with its matchable fields in the
// description's notation. Headers are read by the reference's parsers (src/model/headers.ts)
// and fields described by the design registry (src/wire/designs.ts): strata view decodes
// nothing on its own. Only which design comes next is decided here, from the header before
// (an ethertype, an IP protocol, the bottom-of-stack bit); what no design covers is payload.

import { formatValue } from "../description/notation.js";
import { HEADERS, type Parsed } from "../model/headers.js";
import { designNamed, type FieldDef } from "../wire/designs.js";

export interface DecodedLayer {
  readonly design: string;
  /** Where the header starts in the bytes, and its length. */
  readonly at: number;
  readonly len: number;
  /** [field, value as written in a description, where it sits]. */
  readonly fields: readonly (readonly [string, string, string])[];
}

/** Layers decoded at most: a stack deeper than this is shown as payload from there on. */
const MAX_LAYERS = 8;

// What comes after a header, by the numbers the protocols' own documents assign.
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_MPLS = 0x8847;
const ETHERTYPE_MPLS_MULTICAST = 0x8848;
const ETHERTYPE_TRANSPARENT_ETHERNET = 0x6558; // Ethernet in GRE
const IP_PROTO_IPV4 = 4;
const IP_PROTO_IPV6 = 41;
const IP_PROTO_UDP = 17;
const IP_PROTO_GRE = 47;
const VXLAN_PORT = 4789;
const IPV4_PROTO_BYTE = 9;

/**
 * The headers at the front of `bytes` (from `at`), the first one of design `design` (the
 * network's), then the ones it says it carries. A first header that is not valid gives no layer.
 */
export function decodeLayers(bytes: Uint8Array, design: string, at = 0): DecodedLayer[] {
  const layers: DecodedLayer[] = [];
  let next: string | undefined = design;
  let offset = at;
  while (next !== undefined && layers.length < MAX_LAYERS) {
    const parsed: Parsed | undefined = HEADERS.get(next)?.parse(bytes.subarray(offset));
    if (parsed === undefined) break;
    layers.push({ design: next, at: offset, len: parsed.len, fields: describeFields(next, parsed) });
    offset += parsed.len;
    next = inner(next, parsed, bytes.subarray(offset));
  }
  return layers;
}

function describeFields(design: string, parsed: Parsed): [string, string, string][] {
  const def = designNamed(design);
  return (def?.fields ?? []).flatMap((f: FieldDef): [string, string, string][] => {
    const value = parsed.fields.get(f.name);
    if (value === undefined) return [];
    const text = formatValue(value, f.kind);
    // An ethertype reads as the protocols' documents write it.
    const shown = f.name === "type" ? `${text} (0x${value.toString(16).padStart(4, "0")})` : text;
    return [[f.name, shown, f.where]];
  });
}

/** The design of the header after one of `design`, or undefined when none of strata's follows. */
function inner(design: string, parsed: Parsed, rest: Uint8Array): string | undefined {
  const field = (name: string): number => Number(parsed.fields.get(name) ?? -1n);
  switch (design) {
    case "ethernet":
    case "gre":
      return byEthertype(field("type"), rest);
    case "vxlan":
      return "ethernet";
    case "mpls":
      if (field("s") === 0) return "mpls";
      return byVersion(rest);
    case "ipv4":
      return byIpProtocol(field("proto"), rest);
    case "ipv6":
      return byIpProtocol(field("next"), rest);
    default:
      return undefined;
  }
}

function byEthertype(type: number, rest: Uint8Array): string | undefined {
  if (type === ETHERTYPE_IPV4) return overIpv4(rest);
  if (type === ETHERTYPE_IPV6) return "ipv6";
  if (type === ETHERTYPE_MPLS || type === ETHERTYPE_MPLS_MULTICAST) return "mpls";
  if (type === ETHERTYPE_TRANSPARENT_ETHERNET) return "ethernet";
  return undefined;
}

function byIpProtocol(proto: number, rest: Uint8Array): string | undefined {
  if (proto === IP_PROTO_IPV4) return overIpv4(rest);
  if (proto === IP_PROTO_IPV6) return "ipv6";
  return undefined;
}

/** After an MPLS bottom of stack: IPv4 or IPv6 by the version nibble. */
function byVersion(rest: Uint8Array): string | undefined {
  const version = (rest[0] ?? 0) >> 4;
  return version === 4 ? overIpv4(rest) : version === 6 ? "ipv6" : undefined;
}

/** An IPv4 header, or one of the tunnel designs that start with one (gre, vxlan) when its protocol says so. */
function overIpv4(rest: Uint8Array): string {
  const proto = rest[IPV4_PROTO_BYTE];
  if (proto === IP_PROTO_GRE && HEADERS.get("gre")?.parse(rest) !== undefined) return "gre";
  if (proto === IP_PROTO_UDP) {
    const vxlan = HEADERS.get("vxlan")?.parse(rest);
    if (vxlan !== undefined && vxlan.fields.get("dport") === BigInt(VXLAN_PORT)) return "vxlan";
  }
  return "ipv4";
}
