// strata as a library: the public API, and nothing else. Everything exported here is documented in docs/api.md
// (test/api/docs.test.ts runs its snippets); the rest of src/ is internal and may change.

export {
  type AcquireRow,
  defineDescription,
  type Description,
  type ForwardRow,
  type LinkDescription,
  type LinkRef,
  type MemberDescription,
  type MemberTables,
  type NetworkDescription,
  readDescription,
  type ReceiveRow,
  type Row,
  type RowOf,
  type SendRow,
  type Table,
  type TableRole,
  toYaml,
  type TransmitRow,
  type Values,
} from "./api/description.js";
export { type CapturedPacket, readPackets } from "./api/captures.js";
export type { Device, PacketIn, PacketOut } from "./api/device.js";
export {
  compileDescription,
  type Delivery,
  type Drop,
  Emulation,
  type EmulationEvents,
  type EmulationOptions,
  type Exit,
  type Injected,
  type LinkChange,
  type LinkEvents,
  type MemberChange,
  type Outcome,
  replay,
  type ReplayOptions,
  type ReplayResult,
} from "./api/emulation.js";
export {
  deploy,
  type DeployChange,
  type DeployFailure,
  type DeployOptions,
  type DeployTarget,
  type MachineDeployed,
} from "./deploy/library.js";
export { TableWriteError, type TableWriteCode } from "./api/errors.js";
export { P4RuntimeDevice, type P4RuntimeDeviceOptions } from "./api/p4runtime-device.js";
export type { RowWrite, TableEntry } from "./api/tables.js";
export { InputError } from "./errors.js";
export { PcapError } from "./pcap/errors.js";
export { SpecError, SpecIssue } from "./description/problems.js";
export type { Summary } from "./engine/summary.js";
export type { DropReason } from "./wasm/abi.js";
export type { CompiledSpec } from "./control/compiled.js";
