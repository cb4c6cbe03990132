// The Device interface's second implementation: a controller's writes, reads, packet-ins and packet-outs carried over
// P4Runtime to a device running the description's P4 export — strata's own `strata p4runtime`, or any target the export
// fits. A batch is checked as the emulation checks it (./row-check.ts: the description's own checks), then each row is
// the TableEntry the export writes for it: the description compiled with the batch's rows in their tables, the machine
// built as a P4 device (src/p4/device.ts) and the row's entry taken from it (src/p4/entries.ts tableEntry, on
// src/p4/import.ts exportMatch and src/p4/row-actions.ts), so a row means on the device what the export makes it mean.
// Entries read back are matched by key (src/p4/import.ts importMatch) against the description's rows and the rows
// written here, which gives them back in the description's notation. One StreamChannel per machine carries the
// arbitration (we must be primary), the packet-ins (member and in-link as metadata) and the packet-outs.

import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import { entryKey, prioritised } from "../control/ledger.js";
import type { RawTable } from "../description/raw.js";
import { canonical } from "../p4/bytes.js";
import { device as p4Device, devices, type Device as P4Device, type DeviceTable } from "../p4/device.js";
import { needsPriority, tableEntry } from "../p4/entries.js";
import { bytestringValue, importMatch } from "../p4/import.js";
import { idOf, p4infoIds } from "../p4/p4info.js";
import { type ClientTls, type Controller, P4RuntimeClient, RpcError, type Session } from "../p4runtime/client.js";
import type { Encodable, p4 } from "../p4runtime/messages.js";
import { Code } from "../p4runtime/proto.js";
import type { EntryMatch } from "../wasm/tables.js";
import type { Description, Row, TableRole } from "./description.js";
import type { Device, PacketIn, PacketOut } from "./device.js";
import { loaded } from "./emulation.js";
import { TableWriteError, type TableWriteCode } from "./errors.js";
import { type Place, RowChecker, rowsOf } from "./row-check.js";
import type { RowWrite, TableEntry } from "./tables.js";

export interface P4RuntimeDeviceOptions {
  /** The P4Runtime server of every machine's device that `machines` does not place elsewhere, "HOST:PORT". */
  readonly address?: string;
  /**
   * A machine's own P4Runtime server, "HOST:PORT", by machine name: where each machine is a device of its own, as
   * simple_switch_grpc runs one device per process (`strata deploy --target MACHINE=HOST:PORT` places them so too).
   */
  readonly machines?: Readonly<Record<string, string>>;
  /** The name a description built in code goes by in messages (default "description"). */
  readonly name?: string;
  /** Our election id on every machine's device (default 1): the highest one is the primary, and only it may write. */
  readonly electionId?: bigint;
  readonly tls?: ClientTls;
  /** How long to wait for the server and for each device's arbitration (default 10 s). */
  readonly timeoutMs?: number;
}

type Update = p4.v1.Update<Encodable>;

/** The P4Runtime canonical codes a device refuses an update with, as the emulation's table write errors. */
const REFUSALS: ReadonlyMap<number, TableWriteCode> = new Map([
  [Code.ALREADY_EXISTS, "DuplicateEntry"],
  [Code.NOT_FOUND, "NotFound"],
  [Code.RESOURCE_EXHAUSTED, "TableFull"],
]);

/** A client per server the machines' devices are on; a RangeError for a machine with no server, or one not there. */
function clientsOf(devs: readonly P4Device[], options: P4RuntimeDeviceOptions): Map<string, P4RuntimeClient> {
  const machines = options.machines ?? {};
  for (const name of Object.keys(machines))
    if (!devs.some((d) => d.machine === name))
      throw new RangeError(
        `machines: no machine '${name}' in the description (${devs.map((d) => d.machine).join(", ")})`,
      );
  const addresses = devs.map((dev) => {
    const address = machines[dev.machine] ?? options.address;
    if (address === undefined)
      throw new RangeError(`machine ${dev.machine}: no P4Runtime server (give address, or machines.${dev.machine})`);
    return address;
  });
  const byAddress = new Map<string, P4RuntimeClient>();
  const out = new Map<string, P4RuntimeClient>();
  devs.forEach((dev, i) => {
    const address = addresses[i] ?? "";
    const client = byAddress.get(address) ?? new P4RuntimeClient(address, options.tls);
    byAddress.set(address, client);
    out.set(dev.machine, client);
  });
  return out;
}

/** The machines' devices on a P4Runtime server, as one Device: each machine of the description is a device. */
export class P4RuntimeDevice implements Device {
  readonly description: Description;
  readonly compiled: CompiledSpec;
  /** Each machine's device's client (machines on one server share one). */
  readonly #clients: ReadonlyMap<string, P4RuntimeClient>;
  readonly #devices: readonly P4Device[];
  readonly #sessions = new Map<number, Session>();
  readonly #checker: RowChecker;
  readonly #listeners = new Set<(p: PacketIn) => void>();
  /** Per table id, per entry key, the rows written here (and their text). */
  readonly #written = new Map<number, Map<string, { row: Row; text: string }>>();
  readonly #electionId: bigint;
  /** Devices that refused ROLLBACK_ON_ERROR as unimplemented (simple_switch_grpc). */
  readonly #noRollback = new Set<number>();

  private constructor(source: string | Description, options: P4RuntimeDeviceOptions) {
    const { description, spec } = loaded(source, options.name);
    this.description = description;
    this.compiled = compile(spec);
    this.#devices = devices(this.compiled);
    this.#checker = new RowChecker(description, spec.file, spec.allocation, () => this.compiled);
    this.#clients = clientsOf(this.#devices, options);
    this.#electionId = options.electionId ?? 1n;
  }

  /**
   * Connects to the server at `options.address`, which runs `source`'s P4 export (`strata p4runtime` on the same
   * description), and arbitrates for every machine's device; rejects if we are not the primary of one.
   */
  static async connect(source: string | Description, options: P4RuntimeDeviceOptions): Promise<P4RuntimeDevice> {
    const d = new P4RuntimeDevice(source, options);
    const ms = options.timeoutMs ?? 10_000;
    try {
      for (const client of new Set(d.#clients.values())) await client.ready(ms);
      for (const dev of d.#devices) {
        const session = d.#client(dev).session(d.#controller(dev));
        d.#sessions.set(dev.deviceId, session);
        session.on("packetIn", (p) => d.#packetIn(dev, p));
        const standing = await session.standing(ms);
        if (!standing.primary)
          throw new RpcError(
            Code.PERMISSION_DENIED,
            `device ${dev.deviceId} (machine ${dev.machine}): another controller is primary (election id ` +
              `${standing.highest ?? "?"}, ours ${d.#electionId}): give a higher electionId`,
          );
      }
    } catch (e) {
      await d.close();
      throw e;
    }
    return d;
  }

  #client(dev: P4Device): P4RuntimeClient {
    const client = this.#clients.get(dev.machine);
    if (client === undefined) throw new Error(`machine ${dev.machine}: no P4Runtime client`);
    return client;
  }

  #controller(dev: P4Device): Controller {
    return { deviceId: BigInt(dev.deviceId), electionId: this.#electionId, role: "" };
  }

  #packetIn(dev: P4Device, p: p4.v1.PacketIn): void {
    const meta = new Map((p.metadata ?? []).map((m) => [m.metadataId ?? 0, bytestringValue(m.value)]));
    const m = dev.members.find((x) => BigInt(x.number) === meta.get(1));
    if (m === undefined) return;
    const packet = {
      member: `${m.network.name}:${m.member.key}`,
      inLink: Number(meta.get(2) ?? 0n),
      data: new Uint8Array(p.payload ?? new Uint8Array(0)),
    };
    for (const listener of this.#listeners) listener(packet);
  }

  /** The device of `place`'s member (the machine it is on, as the description has it) and its table there. */
  #table(place: Place, dev: P4Device | undefined = undefined): { dev: P4Device; t: DeviceTable } {
    const machine = this.compiled.members[place.table.member]?.machine ?? -1;
    const d = dev ?? this.#devices[machine];
    const t = d?.tables.find((x) => x.member.member.index === place.table.member && x.role === place.role);
    if (d === undefined || t === undefined)
      throw new Error(`${place.written} ${place.role}: no table of a P4 device (machine ${machine})`);
    return { dev: d, t };
  }

  /** The device's entries of a table, with their counters. */
  async #held(dev: P4Device, t: DeviceTable): Promise<p4.v1.TableEntry[]> {
    const tableId = idOf(p4infoIds(dev).tables, t.name);
    const entities = await this.#client(dev).read(BigInt(dev.deviceId), [
      { entity: "tableEntry", tableEntry: { tableId, counterData: {} } },
    ]);
    return entities.flatMap((e) =>
      e.entity === "tableEntry" && e.tableEntry.tableId === tableId ? [e.tableEntry] : [],
    );
  }

  /** An entry's match as the data plane keys it (its priority when `t` ranks by it). */
  #key(t: DeviceTable, te: p4.v1.TableEntry<Encodable>, priority = te.priority ?? 0): string {
    const names = new Map(t.keys.map((k, i) => [i + 1, k.name]));
    const match: EntryMatch = importMatch(t, te.match ?? [], names, Number(priority));
    return entryKey(t.table, match);
  }

  async write(batch: readonly RowWrite[]): Promise<void> {
    const places = batch.map((w, i) => this.#checker.place(w.member, w.table, i));
    const checked = this.#checker.checked(batch, places);
    const { compiled, slot } = this.#checker.compiledWith(batch, places);
    const built = new Map<number, P4Device>();
    const byDevice = new Map<
      number,
      { dev: P4Device; updates: Update[]; tables: DeviceTable[]; index: number[]; keys: string[] }
    >();
    const top = new Map<string, number>();
    for (const [i, w] of batch.entries()) {
      const place = places[i] as Place;
      const machine = compiled.members[place.table.member]?.machine ?? -1;
      const dev = built.get(machine) ?? p4Device(compiled, machine);
      built.set(machine, dev);
      const { t } = this.#table(place, dev);
      const at = slot[i]?.at ?? -1;
      const e = t.entries.find((x) => x.row.row === at);
      if (e === undefined) throw new Error(`${w.member} ${w.table}: the P4 device lost row ${at}`);
      let te = tableEntry(t, e, p4infoIds(dev));
      if (needsPriority(t)) te = { ...te, priority: await this.#priority(w, i, t, te, batch, places, top) };
      const mine = byDevice.get(dev.deviceId) ?? { dev, updates: [], tables: [], index: [], keys: [] };
      byDevice.set(dev.deviceId, mine);
      const type = w.op === "insert" ? (t.keyless ? "MODIFY" : "INSERT") : w.op === "modify" ? "MODIFY" : "DELETE";
      mine.updates.push({ type, entity: { entity: "tableEntry", tableEntry: te } });
      mine.tables.push(t);
      mine.index.push(i);
      mine.keys.push(this.#key(t, te));
    }
    for (const { dev, updates, tables, index, keys } of byDevice.values()) {
      await this.#send(dev, { updates, tables }, index, batch, checked);
      index.forEach((i, j) =>
        this.#remember(batch[i] as RowWrite, places[i] as Place, keys[j] ?? "", checked[i]?.text),
      );
    }
  }

  /**
   * The priority of a write to a table that ranks by it: an insert ranks above every entry the device holds, the first
   * of a batch highest (as the emulation ranks them); a modify or delete names the entry with the row's match.
   */
  async #priority(
    w: RowWrite,
    i: number,
    t: DeviceTable,
    te: p4.v1.TableEntry,
    batch: readonly RowWrite[],
    places: readonly Place[],
    top: Map<string, number>,
  ): Promise<number> {
    const dev = this.#table(places[i] as Place).dev;
    const held = await this.#held(dev, t);
    if (w.op === "insert") {
      const highest = held.reduce((n, h) => Math.max(n, h.priority ?? 0), 0);
      const inserts = batch.filter((x, j) => j >= i && places[j]?.table.id === t.table.id && x.op === "insert");
      const next = top.get(t.name) ?? highest + inserts.length;
      top.set(t.name, next - 1);
      return next;
    }
    const same = held.find((h) => this.#key(t, h, 0) === this.#key(t, te, 0));
    if (same === undefined)
      throw new TableWriteError(
        { member: w.member, table: w.table, index: i },
        "NotFound",
        "no entry of the table has the row's match",
        "insert it first",
      );
    return same.priority ?? 0;
  }

  /**
   * One device's part of a batch, all or nothing: ROLLBACK_ON_ERROR, or where the device has it not, written and what
   * was applied undone (#writeUndoing); a refusal is the TableWriteError of its write.
   */
  async #send(
    dev: P4Device,
    part: { readonly updates: Update[]; readonly tables: readonly DeviceTable[] },
    index: readonly number[],
    batch: readonly RowWrite[],
    checked: readonly { text: string }[],
  ): Promise<void> {
    try {
      if (this.#noRollback.has(dev.deviceId)) await this.#writeUndoing(dev, part.updates, part.tables);
      else await this.#client(dev).write(this.#controller(dev), part.updates, "ROLLBACK_ON_ERROR");
    } catch (e) {
      // simple_switch_grpc: "Support for atomic write modes has not been implemented yet", the batch not looked at.
      if (e instanceof RpcError && e.code === Code.UNIMPLEMENTED && !this.#noRollback.has(dev.deviceId)) {
        this.#noRollback.add(dev.deviceId);
        return this.#send(dev, part, index, batch, checked);
      }
      if (!(e instanceof RpcError) || e.updates.length === 0) throw e;
      const j = Math.max(
        0,
        e.updates.findIndex((u) => u.code !== Code.OK && u.code !== Code.ABORTED),
      );
      const i = index[j] ?? 0;
      const w = batch[i];
      const u = e.updates[j];
      throw new TableWriteError(
        { member: w?.member ?? "", table: w?.table ?? "", index: i },
        REFUSALS.get(u?.code ?? Code.UNKNOWN) ?? "BadRow",
        `device ${dev.deviceId} refused it: ${u?.message ?? e.details} (${checked[i]?.text ?? ""})`,
        u?.code === Code.ALREADY_EXISTS ? "modify it, or delete it first" : "see the device's message",
      );
    }
  }

  /**
   * A batch on a device with no ROLLBACK_ON_ERROR, all or nothing all the same: written CONTINUE_ON_ERROR, and if an
   * update fails, those applied are undone — an insert deleted, a modify or delete written back as the entry was read
   * before the batch — then the device's refusal thrown. (A keyless table's default entry is not read back: a change
   * of it is not undone.)
   */
  async #writeUndoing(dev: P4Device, updates: readonly Update[], tables: readonly DeviceTable[]): Promise<void> {
    const before = new Map<string, p4.v1.TableEntry>();
    for (const t of new Set(tables.filter((_, j) => updates[j]?.type !== "INSERT")))
      for (const te of await this.#held(dev, t)) before.set(`${t.name} ${this.#key(t, te)}`, te);
    const client = this.#client(dev);
    try {
      await client.write(this.#controller(dev), updates, "CONTINUE_ON_ERROR");
    } catch (e) {
      if (!(e instanceof RpcError) || e.updates.length === 0) throw e;
      const undo: Update[] = [];
      e.updates.forEach((u, j) => {
        const update = updates[j];
        const t = tables[j];
        if (u.code !== Code.OK || update?.entity?.entity !== "tableEntry" || t === undefined) return;
        if (update.type === "INSERT") return void undo.push({ type: "DELETE", entity: update.entity });
        const te = update.entity.tableEntry;
        const old = te === undefined ? undefined : before.get(`${t.name} ${this.#key(t, te)}`);
        if (old === undefined) return;
        const { counterData, ...entry } = old; // written back as it was, its counters left as the device has them
        void counterData;
        undo.push({
          type: update.type === "DELETE" ? "INSERT" : "MODIFY",
          entity: { entity: "tableEntry", tableEntry: entry },
        });
      });
      if (undo.length > 0) await client.write(this.#controller(dev), undo.reverse(), "CONTINUE_ON_ERROR");
      throw e;
    }
  }

  #remember(w: RowWrite, place: Place, key: string, text = ""): void {
    const mine = this.#written.get(place.table.id) ?? new Map<string, { row: Row; text: string }>();
    this.#written.set(place.table.id, mine);
    if (w.op === "delete") mine.delete(key);
    else mine.set(key, { row: w.row, text });
  }

  async read(member: string, table: TableRole): Promise<TableEntry[]> {
    const place = this.#checker.place(member, table);
    const { dev, t } = this.#table(place);
    const described = rowsOf(this.description.networks[place.network]?.tables?.[place.key]?.[table] as RawTable<Row>);
    const rows = new Map(place.table.rows.map((r) => [entryKey(t.table, r.match), r]));
    const written = this.#written.get(place.table.id);
    const out = (await this.#held(dev, t)).map((te, i): TableEntry => {
      const key = this.#key(t, te);
      const base = {
        hits: Number(te.counterData?.packetCount ?? 0),
        priority: prioritised(t.table.kind) ? (te.priority ?? 0) : 0,
      };
      const api = written?.get(key);
      if (api !== undefined) return { row: api.row, text: api.text, by: "api", ...base };
      const r = rows.get(key);
      if (r !== undefined && r.row >= 0)
        return { row: described[r.row], text: r.text, descriptionRow: r.row, by: "description", ...base };
      return { row: undefined, text: `entry ${i}`, by: "p4runtime", ...base };
    });
    return out.sort((a, b) => b.priority - a.priority);
  }

  onPacketIn(listener: (p: PacketIn) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Sends packets as PacketOuts, each on its member's device: at "NETWORK:MEMBER" (the member sends it) or
   * "NETWORK:MEMBER@SESSION" (in that session); P4Runtime's packet_out names no link. Resolves once they are sent: the
   * device says nothing of them, and what they become comes back as packet-ins.
   */
  async packetOut(packets: PacketOut | readonly PacketOut[]): Promise<void> {
    const list: readonly PacketOut[] = Array.isArray(packets) ? packets : [packets as PacketOut];
    for (const p of list) {
      const at = resolveEndpoint(this.compiled, p.at);
      const member = this.compiled.members[at.member];
      const dev = this.#devices[member?.machine ?? -1];
      const number = dev?.members.find((m) => m.member.index === at.member)?.number;
      const session = dev === undefined ? undefined : this.#sessions.get(dev.deviceId);
      if (at.kind === "link" || number === undefined || session === undefined)
        throw new RangeError(
          `packet-out at '${p.at}': a P4Runtime packet-out enters at a member (NETWORK:MEMBER) or in its session ` +
            `(NETWORK:MEMBER@SESSION), not on a link`,
        );
      const value = (v: number): Buffer => Buffer.from(canonical(BigInt(v)));
      session.packetOut({
        payload: Buffer.from(p.data),
        metadata: [
          { metadataId: 1, value: value(number) },
          { metadataId: 2, value: value(at.kind === "session" ? 2 : 1) },
          { metadataId: 3, value: value(at.session) },
        ],
      });
    }
  }

  async close(): Promise<void> {
    for (const s of this.#sessions.values()) s.close();
    this.#sessions.clear();
    for (const client of new Set(this.#clients.values())) client.close();
  }
}
