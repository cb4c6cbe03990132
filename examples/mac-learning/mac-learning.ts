// A MAC-learning controller written against strata's public API (the Device interface) only: it runs the same on an
// Emulation in process and on a P4RuntimeDevice. The switch (examples/mac-learning/network.yaml) hands up every
// frame it has no row for and floods it; for each such packet-in the controller learns the frame's source address on
// the port it came in on, and writes the switch's rows for it in one batch: acquire (forward, not hand up) and forward
// (out that port). The next frames to that address are forwarded by the data plane and never reach the controller.
//
// It imports the repository's src/index.ts, which is what the package's "strata" exports: this file is compiled in the
// repository, by the test that runs it (test/api/controllers.test.ts); a program of its own imports "strata".

import type { Device, PacketIn, RowWrite } from "../../src/index.js";

export interface MacLearning {
  /** The switch's packet-ins so far. */
  readonly packetIns: number;
  /** Each learned address ("02:00:00:00:00:01") and the switch port it is behind. */
  readonly learned: ReadonlyMap<string, number>;
  /** Resolves when the rows of every packet-in so far are written (rejects with the first write that failed). */
  settled(): Promise<void>;
  /** Stops listening. */
  stop(): void;
}

/** An Ethernet address of a frame's bytes, at `at` (0: destination, 6: source). */
export function macOf(frame: Uint8Array, at: number): string {
  return Array.from(frame.subarray(at, at + 6), (b) => b.toString(16).padStart(2, "0")).join(":");
}

/** The rows that send frames for `mac` out of `port` of `sw`: a first time (insert), or when it moved (modify). */
export function learnRows(sw: string, mac: string, port: number, moved: boolean): RowWrite[] {
  const forward: RowWrite = {
    op: moved ? "modify" : "insert",
    member: sw,
    table: "forward",
    row: { match: { dst: mac }, out: port },
  };
  if (moved) return [forward];
  return [{ op: "insert", member: sw, table: "acquire", row: { match: { dst: mac }, do: "forward" } }, forward];
}

/** Learns addresses from the packet-ins of `sw` ("NETWORK:MEMBER") on `device`. */
export function macLearning(device: Device, sw: string): MacLearning {
  let packetIns = 0;
  const learned = new Map<string, number>();
  let writes: Promise<void> = Promise.resolve();
  let failed: unknown;
  const off = device.onPacketIn((p: PacketIn) => {
    if (p.member !== sw) return;
    packetIns++;
    const src = macOf(p.data, 6);
    const was = learned.get(src);
    if (was === p.inLink || (p.data[6] ?? 0) & 1) return; // known here, or a group address (never a source)
    learned.set(src, p.inLink);
    const batch = learnRows(sw, src, p.inLink, was !== undefined);
    writes = writes
      .then(() => device.write(batch))
      .catch((e: unknown) => {
        failed ??= e;
      });
  });
  return {
    get packetIns() {
      return packetIns;
    },
    learned,
    settled: async () => {
      await writes;
      if (failed !== undefined) throw failed;
    },
    stop: off,
  };
}
