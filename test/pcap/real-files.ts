// The real captures (test/fixtures/pcaps-real/, with their provenance) and what tshark said about them.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const REAL_DIR = fileURLToPath(new URL("../fixtures/pcaps-real/", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface TsharkPacket {
  /** pcapng section, 0-based. */
  section: number;
  /** tshark's frame.interface_id: within the section. */
  interface: number;
  capLen: number;
  origLen: number;
  tsNs: string | null;
}

export interface RealFile {
  name: string;
  path: string;
  packets: TsharkPacket[];
  tsharkError?: string;
}

interface Fixture {
  files: Record<string, { packets: TsharkPacket[]; tsharkError?: string }>;
}

const fixture = JSON.parse(readFileSync(new URL("../fixtures/pcaps-real.json", import.meta.url), "utf8")) as Fixture;

export const REAL_FILES: RealFile[] = Object.entries(fixture.files).map(([name, f]) => ({
  name,
  path: REAL_DIR + name,
  ...f,
}));

export const DAMAGED_FILE = "pcapfix_test_damaged.pcap";
