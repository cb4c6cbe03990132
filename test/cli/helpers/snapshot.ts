// What a directory holds, to show what a command changed there or left alone.

import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Every name under `path` (none if it is not there) and what it is: a file by its digest, a symbolic link by its
 * target, "dir"; names `skip` says yes to are left out. */
export function snapshot(path: string, skip: (name: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(path)) return out;
  for (const f of readdirSync(path, { recursive: true, encoding: "utf8" }).sort()) {
    if (skip(f)) continue;
    const p = join(path, f);
    const stat = lstatSync(p);
    out[f] = stat.isSymbolicLink()
      ? `-> ${readlinkSync(p)}`
      : stat.isFile()
        ? createHash("sha256").update(readFileSync(p)).digest("hex")
        : "dir";
  }
  return out;
}
