// Reading captures: 1,000,000 64-byte frames through the reader's batches, no payload copies.

import { existsSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { PcapWriter } from "../src/pcap/pcap-writer.js";
import { PcapngWriter } from "../src/pcap/pcapng-writer.js";
import { openCapture } from "../src/pcap/reader.js";
import type { CaptureWriter } from "../src/pcap/types.js";
import type { Scenario } from "./scenario.js";
import { scratchDir } from "./scratch.js";

const PACKETS = 1_000_000;
const FRAME_LEN = 64;

/** Writes the capture once per process, in its scratch directory; later scenarios reuse it (the name says what is
 * inside). */
function cachedCapture(format: "pcap" | "pcapng"): string {
  const path = join(scratchDir(), `read-${PACKETS}x${FRAME_LEN}.${format}`);
  if (existsSync(path)) return path;
  process.stderr.write(`bench: writing ${path}\n`);
  const partial = `${path}.partial-${process.pid}`;
  let writer: CaptureWriter;
  if (format === "pcap") {
    writer = new PcapWriter(partial, { linkType: 1, snapLen: 262_144 });
  } else {
    const ng = new PcapngWriter(partial);
    ng.addInterface({ linkType: 1 });
    writer = ng;
  }
  // An Ethernet/IPv4/UDP-looking frame whose last bytes count packets.
  const frame = Uint8Array.from({ length: FRAME_LEN }, (_, i) => (i < 12 ? 0x02 : i * 13) & 0xff);
  frame[12] = 0x08;
  frame[13] = 0x00;
  const t0 = 1_700_000_000;
  for (let i = 0; i < PACKETS; i++) {
    frame[FRAME_LEN - 1] = i & 0xff;
    frame[FRAME_LEN - 2] = (i >>> 8) & 0xff;
    writer.write(frame, 0, FRAME_LEN, FRAME_LEN, t0 + Math.floor(i / 1_000_000), (i % 1_000_000) * 1000);
  }
  writer.close();
  renameSync(partial, path);
  return path;
}

/** Keeps the loop's result alive so the engine cannot drop the work. */
export let sink = 0;

function readScenario(format: "pcap" | "pcapng"): Scenario {
  let path = "";
  let bytes = 0;
  return {
    name: `${format}-read`,
    description: `read ${PACKETS} ${FRAME_LEN}-byte frames from a ${format} file in batches (no payload copies)`,
    packets: PACKETS,
    get bytes() {
      return bytes;
    },
    setup() {
      path = cachedCapture(format);
      bytes = statSync(path).size;
    },
    run() {
      const reader = openCapture(path);
      let packets = 0;
      let capBytes = 0;
      for (const b of reader.batches()) {
        const capLen = b.capLen;
        for (let i = 0; i < b.count; i++) capBytes += capLen[i] as number;
        packets += b.count;
      }
      reader.close();
      if (packets !== PACKETS) throw new Error(`${format}-read: read ${packets} packets, expected ${PACKETS}`);
      sink = capBytes;
    },
  };
}

export const pcapRead = readScenario("pcap");
export const pcapngRead = readScenario("pcapng");
