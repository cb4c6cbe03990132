// strata's P4Runtime server held to the P4Runtime 1.4 specification
// (p4lang/p4runtime docs/v1/P4Runtime-Spec.mdk): each test names the section
// it checks. Real gRPC on localhost, the client built from the official
// definitions only (./client.ts), the IP router example's devices.

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Client, type M, type RpcError, statusCode } from "./client.js";
import { ALREADY_EXISTS, election, FAILED_PRECONDITION, INVALID_ARGUMENT, NOT_FOUND, OK, PERMISSION_DENIED, primary, R, route, serve, UNKNOWN } from "./ip-router.js";

/** Each update's code in a Write (all OK, or the p4.v1.Error of each). */
async function codes(client: Client, updates: M[], extra: M = {}): Promise<number[]> {
  try {
    await client.unary("write", { deviceId: String(R), electionId: election(1), updates, ...extra });
    return updates.map(() => OK);
  } catch (e) {
    const err = e as RpcError;
    if (err.code !== UNKNOWN) return [err.code];
    return err.errors.map((x) => x.canonicalCode);
  }
}

describe("§5.3 arbitration updates", () => {
  let s: Awaited<ReturnType<typeof serve>>;
  let client: Client;
  beforeAll(async () => {
    s = await serve(true);
    client = new Client(s.address);
  });
  afterAll(async () => {
    client.close();
    await s.server.close();
  });

  test.each([
    { from: undefined, to: "ops" },
    { from: "ops", to: undefined },
    { from: "ops", to: "other" },
  ])("§5.3 (2.2): a live stream's update for another role ($from → $to) ends it with FAILED_PRECONDITION", async ({ from, to }) => {
    const stream = await primary(client, R, 7, from);
    stream.arbitrate(R, 7, to);
    expect(((await stream.next()).streamError as M | undefined)?.code).toBe(FAILED_PRECONDITION);
  });

  test("§5.3 (1.3): a role.config the server does not know is INVALID_ARGUMENT", async () => {
    const stream = client.stream();
    stream.send({ arbitration: { deviceId: String(R), electionId: election(1), role: { name: "acme", config: { type_url: "type.googleapis.com/acme.RoleConfig", value: Buffer.from([8, 1]) } } } });
    expect(((await stream.next()).streamError as M | undefined)?.code).toBe(INVALID_ARGUMENT);
  });

  test("§5.3: when the primary sends its own election id again, every controller of the role is told again", async () => {
    const a = await primary(client, R, 5, "again");
    const b = client.stream();
    b.arbitrate(R, 3, "again");
    expect(statusCode(await b.next())).toBe(ALREADY_EXISTS);
    a.arbitrate(R, 5, "again");
    expect(statusCode(await a.next())).toBe(OK);
    const told = await b.next();
    expect(statusCode(told)).toBe(ALREADY_EXISTS);
    expect((told.arbitration as M).electionId).toEqual(election(5));
    a.close();
    b.close();
  });

  test("§12: a Write for a role the device does not have is NOT_FOUND; its primary's Write for a role it has goes through", async () => {
    expect(await codes(client, [], { role: "nobody" })).toEqual([NOT_FOUND]);
    const stream = await primary(client, R, 1, "writers");
    expect(await codes(client, [{ type: "INSERT", entity: route([10, 7, 0, 0], 16, 1) }], { role: "writers" })).toEqual([OK]);
    expect(await codes(client, [], { role: "writers", electionId: election(2) })).toEqual([PERMISSION_DENIED]);
    stream.close();
  });
});

