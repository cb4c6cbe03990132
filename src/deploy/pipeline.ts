// Whether a device runs a machine's pipeline (GetForwardingPipelineConfig: its P4Info and
// cookie) and what to do if not: keep it, set it — with a compiled program where the device
// needs one — or refuse, when the device runs the same program with a table's key changed (its
// entries would not mean what the description's do).

import type { p4 } from "../p4runtime/messages.js";
import { encodeP4Info, type MachineDesired } from "./desired.js";

export type PipelineVerdict =
  | { readonly action: "keep" }
  | {
      readonly action: "set";
      readonly why: string;
      /** Whether the device already runs this P4Info (then it may take the P4Info and cookie alone). */
      readonly sameP4Info: boolean;
    }
  | { readonly action: "refuse"; readonly why: string };

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** What a device's pipeline (undefined: it has none) needs to become the machine's. */
export function pipelineVerdict(
  observed: p4.v1.ForwardingPipelineConfig | undefined,
  d: MachineDesired,
): PipelineVerdict {
  const info = observed?.p4info;
  const cookie = observed?.cookie?.cookie;
  if (info === undefined || (info.tables ?? []).length === 0)
    return { action: "set", why: "the device has no pipeline", sameP4Info: false };
  // Our cookie names the P4Info and the program (desired.ts).
  if (cookie === d.cookie) return { action: "keep" };
  if (same(encodeP4Info(info), d.p4infoBinary)) {
    return {
      action: "set",
      why:
        cookie === undefined || cookie === "0"
          ? "the device runs this P4Info but no pipeline strata deploy set (no cookie)"
          : `the device runs this P4Info with cookie ${cookie}, not strata deploy's ${d.cookie}`,
      sameP4Info: true,
    };
  }
  const name = info.pkgInfo?.name ?? "";
  const differs = keyDifference(info, d.p4info);
  if (name === d.p4info.pkgInfo?.name && differs !== undefined)
    return { action: "refuse", why: `the device runs ${name} with ${differs}` };
  return {
    action: "set",
    why: `the device runs another pipeline (${name === "" ? "a program with no name" : name})`,
    sameP4Info: false,
  };
}

function keyText(t: p4.config.v1.Table): string {
  const fields = (t.matchFields ?? []).map((f) => {
    const kind = f.match === "matchType" ? String(f.matchType).toLowerCase() : "other";
    return `${f.name ?? `field ${f.id ?? 0}`} ${kind} ${f.bitwidth ?? 0}`;
  });
  return fields.length === 0 ? "no key" : fields.join(", ");
}

/** The first table (by name) whose key differs between two P4Infos, in words; undefined if none does. */
export function keyDifference(device: p4.config.v1.P4Info, desired: p4.config.v1.P4Info): string | undefined {
  const there = new Map((device.tables ?? []).map((t) => [t.preamble?.name ?? "", t]));
  for (const t of desired.tables ?? []) {
    const name = t.preamble?.name ?? "";
    const d = there.get(name);
    if (d === undefined) continue;
    const a = keyText(d);
    const b = keyText(t);
    if (a !== b) return `table ${t.preamble?.alias ?? name} keyed (${a}), where the description keys it (${b})`;
  }
  return undefined;
}
