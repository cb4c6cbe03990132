// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) written out bit by bit, as the tests'
// reference for src/engine/checksum.ts, which uses zlib's: the two share no code.

export function crc32Reference(bytes: Uint8Array): string {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, "0");
}
