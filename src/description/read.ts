// Reading a description's bytes (and a target profile's, fleet's or updates file's): at most
// MAX_DESCRIPTION_BYTES, through src/read-file.ts (so /dev/zero, a pipe or a huge file costs a
// bounded read, not all memory), and only UTF-8 text, so that a capture or an image given by
// mistake is named as such instead of parsed as YAML.

import { isUtf8 } from "node:buffer";
import { InputError } from "../errors.js";
import { type Head, readUpTo, tooLargeProblem } from "../read-file.js";
import { MAGIC_MICRO, MAGIC_MICRO_SWAPPED, MAGIC_NANO, MAGIC_NANO_SWAPPED } from "../pcap/pcap-layout.js";
import { BT_SHB } from "../pcap/pcapng-layout.js";
import { SpecError, SpecIssue } from "./problems.js";

/** The largest description strata reads: far beyond any hand-written network, far below memory. */
export const MAX_DESCRIPTION_BYTES = 16 * 1024 * 1024;

const FIX = "give the path of a .yaml or .json network description";

/** The text of a description file; a SpecError if it cannot be read, is too large or is not UTF-8 text. */
export function readDescription(file: string, limit = MAX_DESCRIPTION_BYTES): string {
  return readTextFile(file, { what: "file", noun: "description", fix: FIX }, limit);
}

/**
 * The text of a YAML/JSON file strata checks. `what` names it in "cannot read …", `noun` in the
 * size limit, `fix` says what to give instead.
 */
export function readTextFile(
  file: string,
  words: { what: string; noun: string; fix: string },
  limit = MAX_DESCRIPTION_BYTES,
): string {
  const FIX = words.fix;
  const fail = (problem: string, fix = FIX): SpecError =>
    new SpecError([new SpecIssue({ file, path: "", line: 0, column: 0 }, problem, fix)]);
  let head: Head;
  try {
    head = readUpTo(file, limit, words);
  } catch (err) {
    if (err instanceof InputError) throw fail(err.problem, err.fix);
    throw err;
  }
  const bytes = head.bytes;
  const kind = binaryKind(bytes);
  if (kind !== undefined) throw fail(`this is not a text file: it looks like ${kind}`);
  if (startsWith(bytes, 0xff, 0xfe) || startsWith(bytes, 0xfe, 0xff))
    throw fail("this is UTF-16 text", `save the ${words.noun} as UTF-8`);
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw fail(`this is not a text file: byte ${nul} is a NUL`);
  if (head.over) throw fail(tooLargeProblem(limit, words.noun), `${FIX}; see docs/spec.md`);
  if (!isUtf8(bytes)) throw fail("this is not a text file: it is not UTF-8", `save the ${words.noun} as UTF-8`);
  return bytes.toString("utf8");
}

/** What a file that starts with these bytes probably is, when it is a common binary format. */
function binaryKind(bytes: Buffer): string | undefined {
  const magic = bytes.length >= 4 ? bytes.readUInt32BE(0) : undefined;
  if (magic === MAGIC_MICRO || magic === MAGIC_NANO || magic === MAGIC_MICRO_SWAPPED || magic === MAGIC_NANO_SWAPPED)
    return "a pcap capture";
  if (magic === BT_SHB) return "a pcapng capture";
  const known: [string, number[]][] = [
    ["a PNG image", [0x89, 0x50, 0x4e, 0x47]],
    ["a JPEG image", [0xff, 0xd8, 0xff]],
    ["a GIF image", [0x47, 0x49, 0x46, 0x38]],
    ["a PDF document", [0x25, 0x50, 0x44, 0x46]],
    ["a gzip archive", [0x1f, 0x8b]],
    ["a zip archive", [0x50, 0x4b, 0x03, 0x04]],
    ["an ELF executable", [0x7f, 0x45, 0x4c, 0x46]],
    ["a WebAssembly module", [0x00, 0x61, 0x73, 0x6d]],
  ];
  return known.find(([, prefix]) => startsWith(bytes, ...prefix))?.[0];
}

function startsWith(bytes: Buffer, ...prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}
