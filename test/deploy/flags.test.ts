// `strata deploy`'s bad flags: one line on stderr, exit 2, nothing connected to.

import { describe, expect, it } from "vitest";
import { deploy, REPO, spec } from "./helpers.js";

const IP = spec("ip-router");

describe("bad flags: one line, exit 2", () => {
  it.each([
    { args: [IP], line: /^strata: required option '--target <machine=host:port\[@id\]>' not specified/ },
    { args: [IP, "--target", "r=nohost"], line: /^strata: --target 'r=nohost': write MACHINE=HOST:PORT or/ },
    { args: [IP, "--target", "r=127.0.0.1:70000"], line: /^strata: --target 'r=127\.0\.0\.1:70000': write/ },
    {
      args: [IP, "--target", "rr=127.0.0.1:1"],
      line: new RegExp(
        "^strata: --target rr=127\\.0\\.0\\.1:1: the description has no machine rr " +
          "\\(did you mean 'r'\\? machines: h1, r, h2\\)\n$",
      ),
    },
    {
      args: [IP, "--target", "r=127.0.0.1:1", "--target", "r=127.0.0.1:2"],
      line: /^strata: --target r: given twice \(one device per machine\)\n$/,
    },
    {
      args: [IP, "--target", "r=127.0.0.1:1", "--election-id", "0"],
      line: /^strata: --election-id '0': a whole number/,
    },
    {
      args: [IP, "--target", "r=127.0.0.1:1", "--election-id", String(1n << 128n)],
      line: /^strata: --election-id '\d+': a whole number from 1 to 2\^128 − 1/,
    },
    {
      args: [IP, "--target", "r=127.0.0.1:1", "--plan", "--watch"],
      line: /^strata: --plan writes nothing and --watch/,
    },
    { args: [IP, "--target", "r=127.0.0.1:1", "--batch", "0"], line: /^strata: --batch 0 is too small/ },
    { args: [`${REPO}/examples/nope.yaml`, "--target", "r=127.0.0.1:1"], line: /^strata: .*nope\.yaml/ },
  ])("$args", async ({ args, line }) => {
    const r = await deploy(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(line);
    expect(r.err.split("\n")).toHaveLength(2);
    expect(r.out).toBe("");
  });
});
