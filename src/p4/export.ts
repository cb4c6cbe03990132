// `strata export p4`: one directory per machine with the P4 program, its
// P4Info, the installed rows as a P4Runtime WriteRequest (JSON and binary),
// the same rows as simple_switch_CLI commands, and a manifest saying what is
// where and what was left out.

import type protobuf from "protobufjs";
import protojson from "protobufjs/ext/protojson.js";
import textformat from "protobufjs/ext/textformat.js";
import type { CompiledSpec } from "../control/compiled.js";
import type { OutDir } from "../out-dir.js";
import { protoRoot } from "../p4runtime/definitions.js";
import type { p4 } from "../p4runtime/messages.js";
import { CPU_PORT, type Device, devices, outOf, RECIRC_PORT } from "./device.js";
import { writeRequest } from "./entries.js";
import { qualified } from "./names.js";
import { p4info, p4infoIds } from "./p4info.js";
import { MAX_PASSES, program } from "./program.js";
import { runtimeCli } from "./runtime-cli.js";

export const FILES = [
  "main.p4",
  "p4info.json",
  "p4info.txtpb",
  "entries.json",
  "entries.bin",
  "runtime_cli.txt",
  "manifest.json",
] as const;
export type ExportFile = (typeof FILES)[number];

export interface MachineManifest {
  readonly machine: string;
  readonly deviceId: number;
  readonly source: string;
  readonly arch: "v1model";
  readonly files: Readonly<Record<ExportFile, string>>;
  readonly members: readonly {
    readonly number: number;
    readonly p4: string;
    readonly member: string;
    readonly design: string;
    readonly tables: readonly {
      readonly role: string;
      readonly table: string;
      readonly id: number;
      readonly kind: string;
      readonly size: number;
      readonly entries: number;
    }[];
  }[];
  readonly ports: readonly {
    readonly port: number;
    readonly member: string;
    readonly link: number;
    readonly links: readonly string[];
    readonly peers: readonly string[];
    readonly alsoSentBy: readonly string[];
  }[];
  readonly reservedPorts: { readonly cpu: number; readonly recirculation: number };
  readonly multicastGroups: readonly {
    readonly id: number;
    readonly member: string;
    readonly outLinks: readonly number[];
    readonly replicas: readonly { readonly port: number; readonly instance: number }[];
  }[];
  readonly actionSelectors: readonly {
    readonly name: string;
    readonly table: string;
    readonly members: number;
    readonly groups: readonly { readonly id: number; readonly outLink: number; readonly members: readonly number[] }[];
  }[];
  readonly updates: number;
  readonly leftOut: readonly { readonly what: string; readonly why: string }[];
}

export interface MachineExport {
  readonly manifest: MachineManifest;
  readonly files: Readonly<Record<ExportFile, string | Uint8Array>>;
  /** The messages p4info.* and entries.* hold, as gRPC decodes them. */
  readonly messages: { readonly p4info: p4.config.v1.P4Info; readonly entries: p4.v1.WriteRequest };
}

const DESCRIPTIONS: Record<ExportFile, string> = {
  "main.p4": "the P4_16 program for v1model (compile with p4c --target bmv2 --arch v1model)",
  "p4info.json": "P4Info of main.p4, protobuf JSON mapping",
  "p4info.txtpb": "the same P4Info in protobuf text format",
  "entries.json": "P4Runtime WriteRequest inserting every installed row, protobuf JSON mapping",
  "entries.bin": "the same WriteRequest, binary protobuf",
  "runtime_cli.txt": "the same entries as simple_switch_CLI commands",
  "manifest.json": "this file",
};

/** Every machine's files, in memory. Throws InputError for what v1model cannot express. */
export function exportP4(compiled: CompiledSpec, source: string): MachineExport[] {
  return devices(compiled).map((dev) => exportDevice(compiled, dev, source));
}

function exportDevice(compiled: CompiledSpec, dev: Device, source: string): MachineExport {
  const ids = p4infoIds(dev);
  const messages = { p4info: p4info(dev, ids), entries: writeRequest(dev, ids) };
  const root = protoRoot();
  const info = encodings(root.lookupType("p4.config.v1.P4Info"), messages.p4info);
  const entries = encodings(root.lookupType("p4.v1.WriteRequest"), messages.entries);
  const manifest: MachineManifest = {
    machine: dev.machine,
    deviceId: dev.deviceId,
    source,
    arch: "v1model",
    files: DESCRIPTIONS,
    members: dev.members.map((m) => ({
      number: m.number,
      p4: m.ident,
      member: m.member.qualified,
      design: m.design.name,
      tables: dev.tables
        .filter((t) => t.member === m)
        .map((t) => ({
          role: t.role,
          table: t.name,
          id: ids.tables.get(qualified(t.name)) ?? 0,
          kind: t.table.kind,
          size: t.table.capacity,
          entries: t.entries.length,
        })),
    })),
    ports: dev.ports.map((p) => ({
      port: p.port,
      member: p.member,
      link: p.ident,
      links: p.links,
      peers: p.peers,
      alsoSentBy: p.alsoSentBy,
    })),
    reservedPorts: { cpu: CPU_PORT, recirculation: RECIRC_PORT },
    multicastGroups: dev.multicast.map((g) => ({
      id: g.id,
      member: g.member.member.qualified,
      outLinks: g.outLinks,
      replicas: g.replicas,
    })),
    actionSelectors: dev.tables.flatMap((t) =>
      t.selector === undefined
        ? []
        : [{ name: t.selector.name, table: t.name, members: t.selector.members.length, groups: t.selector.groups }],
    ),
    updates: messages.entries.updates?.length ?? 0,
    leftOut: leftOut(compiled, dev),
  };
  return {
    manifest,
    files: {
      "main.p4": program(dev, source, ids),
      "p4info.json": info.json,
      "p4info.txtpb": info.text,
      "entries.json": entries.json,
      "entries.bin": entries.binary,
      "runtime_cli.txt": runtimeCli(dev),
      "manifest.json": `${JSON.stringify(manifest, null, 2)}\n`,
    },
    messages,
  };
}

/**
 * A message's three forms, encoded with the official definitions: the protobuf JSON mapping
 * (canonical: lowerCamelCase, defaults left out, bytes in base64, 64-bit integers as strings),
 * binary, and text format.
 */
function encodings(type: protobuf.Type, m: object): { json: string; binary: Uint8Array; text: string } {
  const message = type.fromObject(m);
  return {
    json: `${JSON.stringify(protojson.toJson(type, message), null, 2)}\n`,
    binary: type.encode(message).finish(),
    text: textformat.toText(type, message),
  };
}

/** What the device does not do that the emulator does, and why — stated, never silently dropped. */
function leftOut(compiled: CompiledSpec, dev: Device): { what: string; why: string }[] {
  const items: { what: string; why: string }[] = [];
  const here = new Set(dev.members.map((m) => m.member.index));
  for (const l of compiled.links) {
    if (l.sender < 0 || !here.has(l.sender)) continue;
    const sender = compiled.members[l.sender];
    const row = sender?.tables.transmit?.rows.find((r) => outOf(r) === l.senderOutLink);
    if (row?.action.name === "external-session") {
      items.push({
        what: `link ${l.qualified} (from ${sender?.qualified ?? "?"}.${l.senderOutLink})`,
        why:
          `implemented by layering (a session of an underlay): no port; its ` +
          `packets leave inside the underlay's header, and no switch captures it`,
      });
    }
  }
  items.push(
    {
      what: "per-link captures, per-member drop counters and traces",
      why:
        "a switch has none; the program records why it drops a packet in " +
        "meta.drop_reason (strata's drop reasons) for a debugger or counters " +
        "you add",
    },
    {
      what: "strata's hop limit",
      why:
        `a packet's passes through this machine are bounded by MAX_PASSES (${MAX_PASSES}); hops between ` +
        `machines are the network's (TTL), as on real switches`,
    },
    {
      what: "deliveries",
      why:
        `a delivered packet goes to the controller (port ${CPU_PORT}) as a packet-in with the member number ` +
        `and in-link; what the machine sends comes back as a packet-out (member, kind self or session, session)`,
    },
  );
  if (dev.tables.some((t) => t.selector !== undefined)) {
    items.push({
      what: "strata's anycast hash",
      why:
        "the action selector hashes the flow fields with crc16: one flow keeps " +
        "one receiver, as in strata, but which receiver may differ",
    });
  }
  return items;
}

/** The files of every machine, relative to the output directory: <machine>/main.p4, … */
export function exportFiles(exports: readonly MachineExport[]): string[] {
  return exports.flatMap((ex) => FILES.map((f) => `${ex.manifest.machine}/${f}`));
}

/** Writes <machine>/ for every machine into `out`, claimed for exportFiles(exports). */
export function writeExport(out: OutDir, exports: readonly MachineExport[]): void {
  for (const ex of exports) for (const f of FILES) out.write(`${ex.manifest.machine}/${f}`, ex.files[f]);
}
