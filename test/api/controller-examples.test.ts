// The controller examples (examples/*/example.json with a "controller"): each controller runs on an Emulation of its
// example's network.yaml while the packets of its driver below are sent, and what became of each packet — and of each
// change the driver makes — is held to the example's expected lines (UPDATE_GOLDENS=1 writes them from a run).

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { macLearning } from "../../examples/mac-learning/mac-learning.js";
import { routing } from "../../examples/routing-controller/routing.js";
import { Emulation, type Outcome } from "../../src/index.js";
import { CONTROLLER_EXAMPLES, type ControllerExample } from "../helpers/examples.js";
import { frame, mac, MAC_STEPS, packet, PAIRS, R1_R2 } from "./controller-cases.js";

const ROOT = new URL("../..", import.meta.url).pathname;

/** What became of a packet: the members it was delivered to, and the drops. */
function told(outcome: Outcome, ttlAt?: number): string {
  const delivered = outcome.delivered.map((d) => d.member + (ttlAt === undefined ? "" : ` (TTL ${d.data[ttlAt]})`));
  const dropped = outcome.dropped.map((d) => `${d.count} dropped at ${d.member ?? "a link"} (${d.reason})`);
  return [delivered.length > 0 ? `delivered to ${delivered.join(", ")}` : "", ...dropped].filter((s) => s).join("; ");
}

/** Each controller example's driver: starts its controller on `em` and says what each packet and change came to. */
const DRIVERS: Record<string, { controller: string; run(em: Emulation, file: string): Promise<string[]> }> = {
  "mac-learning": {
    controller: "mac-learning.ts",
    run: async (em) => {
      const ctl = macLearning(em, "lan:sw");
      const lines: string[] = [];
      for (const { send } of MAC_STEPS) {
        const [host, dst] = send;
        const before = ctl.packetIns;
        const outcome = await em.inject(`lan:h${host}`, frame(dst, mac(host)));
        await ctl.settled();
        const up = ctl.packetIns > before ? "handed up (learned), " : "";
        const reached = { ...outcome, delivered: outcome.delivered.filter((d) => d.member !== "lan:sw") };
        lines.push(`h${host} → ${dst}: ${up}${told(reached)}`);
      }
      lines.push(`learned: ${[...ctl.learned].map(([m, port]) => `${m} on port ${port}`).join(", ")}`);
      return lines;
    },
  },
  "routing-controller": {
    controller: "routing.ts",
    run: async (em, file) => {
      const ctl = await routing(em, em.description, "ip", em);
      void file;
      const lines: string[] = [];
      const say = (w: { inserted: number; modified: number; deleted: number } | undefined) =>
        `rows written: ${w?.inserted ?? 0} inserted, ${w?.modified ?? 0} modified, ${w?.deleted ?? 0} deleted`;
      lines.push(`started: ${say(ctl.written[0])}`);
      const send = async () => {
        for (const { from, to } of PAIRS)
          lines.push(`h${from} → h${to}: ${told(await em.inject(`ip:h${from}`, packet(from, to)), 8)}`);
      };
      await send();
      for (const up of [false, true]) {
        await em.setLink(R1_R2, up);
        await ctl.settled();
        lines.push(`${R1_R2} ${up ? "up" : "down"}: ${say(ctl.written.at(-1))}`);
        await send();
      }
      return lines;
    },
  },
};

describe.each(CONTROLLER_EXAMPLES)("controller example %s", (name) => {
  const dir = join(ROOT, "examples", name);
  const jsonFile = join(dir, "example.json");
  const example = JSON.parse(readFileSync(jsonFile, "utf8")) as ControllerExample;

  test("its controller, run on its network, does what the example expects", async () => {
    const driver = DRIVERS[name];
    expect(driver?.controller, `a driver for ${name} in this test`).toBe(example.controller);
    if (driver === undefined) return;
    const file = join(dir, "network.yaml");
    const em = Emulation.load(file);
    try {
      const lines = await driver.run(em, file);
      if (process.env.UPDATE_GOLDENS === "1")
        writeFileSync(jsonFile, `${JSON.stringify({ ...example, expect: lines }, null, 2)}\n`);
      expect(lines).toEqual(example.expect);
    } finally {
      await em.close();
    }
  });
});
