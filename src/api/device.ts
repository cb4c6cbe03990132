// What a controller needs of a device, behind one interface: table writes in
// atomic batches, entries read back, packets the device hands up (packet-ins)
// and packets the controller sends through it (packet-outs). The in-process
// emulation (./emulation.ts) is the first implementation; a P4Runtime client
// is shaped to be the second: write() is a WriteRequest (each RowWrite an
// Update of a TableEntry, src/p4/import.ts's mapping read the other way), read()
// a ReadRequest of one table, onPacketIn() the StreamChannel's PacketIns and
// packetOut() its PacketOuts (src/p4runtime/stream.ts), the member and in-link
// carried as packet metadata.

import type { TableRole } from "./description.js";
import type { RowWrite, TableEntry } from "./tables.js";

/** A packet the device hands up to the controller: delivered to `member`, on its link `inLink`. */
export interface PacketIn {
  /** "NETWORK:MEMBER". */
  readonly member: string;
  readonly inLink: number;
  readonly data: Uint8Array;
}

/**
 * A packet the controller sends through the device, entering where an endpoint of `strata run --in` says:
 * "lan:h1" (sent by member h1, through its forward table), "lan:h1@7" (in h1's session 7), "lan:h1.1" (on h1's link 1)
 * or "lan:uplink" (arriving on an external link).
 */
export interface PacketOut {
  readonly at: string;
  readonly data: Uint8Array;
}

export interface Device {
  /** Writes a batch, all or nothing: a TableWriteError names the write refused, and nothing of the batch is applied. */
  write(batch: readonly RowWrite[]): Promise<void>;
  /** The entries of `member`'s `table`, in the description's notation, with their hit counts. */
  read(member: string, table: TableRole): Promise<TableEntry[]>;
  /** Calls `listener` for every packet-in; returns the unsubscribe. */
  onPacketIn(listener: (p: PacketIn) => void): () => void;
  /** Sends packets through the device; resolves when they have run. */
  packetOut(packets: PacketOut | readonly PacketOut[]): Promise<void>;
  close(): Promise<void>;
}
