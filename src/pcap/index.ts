// The capture API in one import: readers, writers, link types, errors.

export * from "./types.js";
export { openCapture, openCaptureBytes } from "./reader.js";
export { PcapWriter, pcapFileHeader, pcapWriterOptionsFrom, type PcapWriterOptions } from "./pcap-writer.js";
export {
  PcapngWriter,
  pcapngInterfaceOptionsFrom,
  type PcapngInterfaceOptions,
  type PcapngWriterOptions,
} from "./pcapng-writer.js";
export { type ByteSink, MemoryByteSink, fileSink } from "./byte-sink.js";
export {
  LINKTYPE,
  type LinkTypeName,
  linkTypeByName,
  linkTypeName,
  maxCapLen,
  MAX_CAP_LEN_DEFAULT,
} from "./link-types.js";
export { PcapError, type PcapErrorKind } from "./errors.js";
export { DEFAULT_BATCH_SIZE } from "./batch.js";
export { DEFAULT_CHUNK_LEN } from "./byte-source.js";
export { type AheadFile, type AheadSlots, ReadAhead } from "./read-ahead.js";
