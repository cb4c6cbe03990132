// The process that holds one of strata serve's live interfaces (src/serve/ports.ts
// starts one per port): it opens the interface with cap and relays frames over
// its stdin and stdout. It is a process of its own because cap ends the process
// it runs in (an assertion in its binding) when an interface it captures on goes
// down or away; strata serve and its other ports then go on, and the port opens
// again.
//
// What it captures waits in the kernel's capture buffer until this process
// runs: that buffer is what carries a port through the moments this process is
// not scheduled (strata gives its size: captureBuffer in ports.ts). Frames then
// wait here, copied into a slab (RecordWriter), until the end of the event
// loop's turn or until the slab is full, and in the pipe to strata,
// whose writes queue in this process while strata falls behind (node writes a
// pipe without blocking once it is full). Those of a process that ends before
// it wrote them never reach strata: it counts them with the capture's drops
// (from the interface's counters).
//
// Arguments: BUFFER INDEX=IFACE ... (the capture buffer's size in bytes, then the port's index in strata serve and
// its interface; strata gives one).
// Records both ways: kind u8, port u8, 2 bytes zero, length u32 (little-endian), then the bytes.
//   to strata:   FRAME (received on the port), OPENED (JSON: the ports' link types, in
//                argument order), FAILED (a one-line reason; then the process ends), SEND_ERROR
//   from strata: FRAME (to send out of the port)

import { createRequire } from "node:module";
import { FLAG_CUT, RECORD, RecordReader, RecordWriter, record } from "./port-records.js";

interface CapHandle {
  open(device: string, filter: string, bufSize: number, buffer: Buffer): string;
  send(buffer: Buffer, nBytes?: number): void;
  on(event: "packet", listener: (nbytes: number, truncated: boolean) => void): void;
}

/** Largest frame read or sent: libpcap's snapshot length in cap. */
const FRAME_MAX = 65535;

function main(): void {
  // Records to strata, written into a slab: no buffer per frame, one write per turn of the event loop (or per slab
  // filled, while cap's callbacks drain the capture buffer within one turn).
  const out = new RecordWriter((bytes) => process.stdout.write(bytes));
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    out.flush();
  };
  const emit = (kind: number, port: number, body: Uint8Array, flags = 0): void => {
    out.put(kind, port, body, flags);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const fail = (port: number, why: string): never => {
    flush();
    process.stdout.write(record(RECORD.FAILED, port, Buffer.from(why)), () => process.exit(2));
    // Exit once the record is out; the timer is a backstop.
    setTimeout(() => process.exit(2), 1000);
    throw new Error(why);
  };

  const bufferBytes = Number(process.argv[2]);
  const ports = process.argv.slice(3).map((a) => {
    const eq = a.indexOf("=");
    return { index: Number(a.slice(0, eq)), iface: a.slice(eq + 1) };
  });
  let Cap: new () => CapHandle;
  try {
    Cap = (createRequire(import.meta.url)("cap") as { Cap: new () => CapHandle }).Cap;
  } catch (err) {
    fail(255, `cannot load cap: ${err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err)}`);
    return;
  }
  const handles = new Map<number, { handle: CapHandle }>();
  const linkTypes: string[] = [];
  for (const p of ports) {
    const handle = new Cap();
    const buffer = Buffer.alloc(FRAME_MAX);
    try {
      linkTypes.push(handle.open(p.iface, "", bufferBytes, buffer));
    } catch (err) {
      fail(p.index, err instanceof Error ? err.message : String(err));
      return;
    }
    handle.on("packet", (nbytes, truncated) => {
      emit(RECORD.FRAME, p.index, buffer.subarray(0, nbytes), truncated ? FLAG_CUT : 0);
    });
    handles.set(p.index, { handle });
  }
  emit(RECORD.OPENED, 0, Buffer.from(JSON.stringify(linkTypes)));

  // Frames to send.
  const reader = new RecordReader((kind, port, _flags, body) => {
    const h = handles.get(port);
    if (h === undefined || kind !== RECORD.FRAME) return;
    try {
      h.handle.send(body, body.length);
    } catch (err) {
      emit(RECORD.SEND_ERROR, port, Buffer.from(err instanceof Error ? err.message : String(err)));
    }
  });
  process.stdin.on("data", (chunk: Buffer) => reader.feed(chunk));
  // strata went away (or closed the ports): so does this process.
  process.stdin.on("end", () => process.exit(0));
}

main();
