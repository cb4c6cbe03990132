// Preloaded (`node --require`) by test/cli/out-dir-full.test.ts into a strata process: a disk
// that takes STRATA_TEST_DISK_LEFT more bytes, then fails every write with ENOSPC, having
// written what fit, as a full file system does. node:fs's writes are replaced before strata
// loads, for its ES modules too (syncBuiltinESMExports).
"use strict";
const fs = require("node:fs");
const { syncBuiltinESMExports } = require("node:module");

let left = Number(process.env.STRATA_TEST_DISK_LEFT);
const full = () =>
  Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
/** Takes up to `len` bytes from the disk: how many fit. */
const take = (len) => {
  const fit = Math.min(len, left);
  left -= fit;
  return fit;
};
const bytesOf = (data) =>
  typeof data === "string" ? Buffer.from(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
const { writeSync, writeFileSync } = fs;

fs.writeSync = function (fd, data, ...rest) {
  const bytes = bytesOf(data);
  const text = typeof data === "string";
  const offset = text ? 0 : (rest[0] ?? 0);
  const length = text ? bytes.length : (rest[1] ?? bytes.length - offset);
  const position = text ? rest[0] : rest[2];
  const fit = take(length);
  if (fit === 0 && length > 0) throw full();
  return writeSync(fd, bytes, offset, fit, position ?? null);
};

fs.writeFileSync = function (path, data, options) {
  const bytes = bytesOf(data);
  const fit = take(bytes.length);
  writeFileSync(path, bytes.subarray(0, fit), options);
  if (fit < bytes.length) throw full();
};

syncBuiltinESMExports();
