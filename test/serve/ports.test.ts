// The capture buffer each live port gets: 128 MB (2,046 frames in libpcap's 64 KB slots) while the
// ports' buffers together stay within 512 MB, never under the 8 MB strata had.

import { describe, expect, it } from "vitest";
import { captureBuffer } from "../../src/serve/ports.js";

const MB = 1 << 20;

describe("captureBuffer", () => {
  it.each([
    { ports: 1, mb: 128 },
    { ports: 2, mb: 128 },
    { ports: 4, mb: 128 },
    { ports: 5, mb: 102 },
    { ports: 16, mb: 32 },
    { ports: 64, mb: 8 },
    { ports: 255, mb: 8 },
  ])("$ports ports: $mb MB each", ({ ports, mb }) => {
    expect(captureBuffer(ports)).toBe(mb * MB);
  });
});
