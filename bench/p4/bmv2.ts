// One bmv2 simple_switch, for the tests and the bench: started on a compiled program (p4c-bm2-ss's JSON), its
// entries loaded with simple_switch_CLI from runtime_cli.txt, and its ports on one nanomsg PAIR
// socket (`--packet-in ipc://…`, the interface bmv2's own PTF tests use): every packet in or out
// is a message naming its port, so any port number works — the CPU port 255 too — without
// interfaces, namespaces or root, and nothing but what the switch sends ever arrives.
//
// The nanomsg wire format (its IPC transport, PAIR protocol): after an 8-byte greeting each way
// ("\0SP\0", protocol 0x0010, two zero bytes), a message is one byte 1, its length as a
// big-endian u64, then the message. bmv2's message (src/bm_sim/dev_mgr_packet_in.cpp) is three
// little-endian int32 — type (3 packet in, 4 packet out), port, length — then the packet.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.js";
import type { P4Tools } from "./toolchain.js";

const GREETING = Buffer.from([0x00, 0x53, 0x50, 0x00, 0x00, 0x10, 0x00, 0x00]);
const MSG_NORMAL = 1;
const FRAME_HEADER = 9;
const BM_HEADER = 12;
const PACKET_IN = 3;
const PACKET_OUT = 4;

/** Up to `ms` for a switch to open its ports and its Thrift server: a hang after that, not a slow start (a busy machine
 * takes seconds). */
const START_MS = 60_000;

export type PacketListener = (port: number, bytes: Uint8Array) => void;

export class Switch {
  readonly #child: ChildProcess;
  readonly #socket: Socket;
  readonly #dir: string;
  #listener: PacketListener = () => undefined;
  #stderr: () => string = () => "";
  #socketError: Error | undefined;
  /** Lines of simple_switch_CLI's output that report an error ("Invalid table operation (…)", "Error: …", "*** Unknown
   * syntax: …"). */
  cliErrors: string[] = [];
  cliOutput = "";
  /** simple_switch_grpc's P4Runtime server (startGrpc), HOST:PORT. */
  grpcAddress = "";

  private constructor(child: ChildProcess, socket: Socket, dir: string) {
    this.#child = child;
    this.#socket = socket;
    this.#dir = dir;
    let pending: Buffer = Buffer.alloc(0);
    let greeted = false;
    // A switch that dies (one that exits while starting, and is started again on other ports) breaks its ports socket:
    // the write that finds it broken is kept and said with the switch's stderr, not thrown in no one's face.
    socket.on("error", (err) => (this.#socketError ??= err));
    socket.on("data", (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (!greeted) {
          if (pending.length < GREETING.length) return;
          pending = pending.subarray(GREETING.length);
          greeted = true;
          continue;
        }
        if (pending.length < FRAME_HEADER) return;
        const len = Number(pending.readBigUInt64BE(1));
        if (pending.length < FRAME_HEADER + len) return;
        const msg = pending.subarray(FRAME_HEADER, FRAME_HEADER + len);
        pending = pending.subarray(FRAME_HEADER + len);
        if (msg.readInt32LE(0) === PACKET_OUT)
          this.#listener(msg.readInt32LE(4), new Uint8Array(msg.subarray(BM_HEADER, BM_HEADER + msg.readInt32LE(8))));
      }
    });
  }

  /**
   * Starts simple_switch on `json` (the compiled program's bmv2 JSON) and loads `commands`
   * (runtime_cli.txt). A switch that exits while starting (its Thrift port taken by another
   * process between our look and its bind) is started again, on another port.
   */
  static async start(tools: P4Tools, json: string, commands: string, deviceId = 0): Promise<Switch> {
    return Switch.#attempts(() => Switch.#start(tools, { json, commands }, deviceId));
  }

  /**
   * Starts simple_switch_grpc with no program (`--no-p4`): a P4Runtime server on `grpcAddress`
   * for device `deviceId`, whose pipeline and entries a controller sets (strata deploy). With
   * `cpuPort`, what the switch sends there is a P4Runtime packet-in on the controller's stream, and
   * the controller's packet-outs enter there (P4Runtime packet I/O); without, it is a port as any.
   */
  static startGrpc(tools: P4Tools, deviceId: number, cpuPort?: number): Promise<Switch> {
    return Switch.#attempts(() => Switch.#start(tools, { cpuPort }, deviceId));
  }

  static async #attempts(start: () => Promise<Switch>): Promise<Switch> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await start();
      } catch (err) {
        if (!(err instanceof ExitedEarly) || attempt === 3) throw err;
      }
    }
  }

  static async #start(
    tools: P4Tools,
    program: { readonly json: string; readonly commands: string } | { readonly cpuPort: number | undefined },
    deviceId: number,
  ): Promise<Switch> {
    const dir = mkdtempSync(join(tmpdir(), "strata-bmv2-"));
    const ipc = join(dir, "ports.ipc");
    const thrift = await freePort();
    const grpc = "cpuPort" in program ? await freePort() : 0;
    // Its own notifications socket: the default (/tmp/bmv2-<device id>-notifications.ipc) is one per device id,
    // machine-wide.
    const notifications = `ipc://${join(dir, "notifications.ipc")}`;
    const args = [
      "--packet-in",
      `ipc://${ipc}`,
      "--notifications-addr",
      notifications,
      "--thrift-port",
      String(thrift),
      "--device-id",
      String(deviceId),
    ];
    if ("cpuPort" in program) {
      args.push("--no-p4", "--", "--grpc-server-addr", `127.0.0.1:${grpc}`);
      if (program.cpuPort !== undefined) args.push("--cpu-port", String(program.cpuPort));
    } else {
      writeFileSync(join(dir, "main.json"), program.json);
      args.push(join(dir, "main.json"));
    }
    const child = spawn("cpuPort" in program ? tools.simpleSwitchGrpc : tools.simpleSwitch, args, {
      env: tools.env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    running.add(child);
    child.once("exit", () => running.delete(child));
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    try {
      const socket = await retry(
        () => open(ipc),
        `simple_switch's ports (ipc://${ipc})`,
        child,
        () => stderr,
      );
      const sw = new Switch(child, socket, dir);
      sw.#stderr = () => stderr;
      socket.write(GREETING);
      // simple_switch_grpc serves P4Runtime in place of Thrift.
      if (!("cpuPort" in program))
        await retry(
          () => open(thrift).then((s) => s.destroy()),
          `simple_switch's Thrift port ${thrift}`,
          child,
          () => stderr,
        );
      if ("cpuPort" in program) {
        await retry(
          () => open(grpc).then((s) => s.destroy()),
          `simple_switch_grpc's P4Runtime port ${grpc}`,
          child,
          () => stderr,
        );
        sw.grpcAddress = `127.0.0.1:${grpc}`;
        return sw;
      }
      const cli = await runCli(tools, thrift, program.commands);
      sw.cliOutput = cli;
      sw.cliErrors = cli
        .split("\n")
        .map((l) => l.replace(/^(RuntimeCmd: )+/, ""))
        .filter((l) => /^(Invalid |Error|\*\*\* |Traceback)/.test(l) || /Exception/.test(l));
      return sw;
    } catch (err) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Where packets the switch sends go. */
  onPacket(listener: PacketListener): void {
    this.#listener = listener;
  }

  /** A packet arriving on `port`. */
  send(port: number, bytes: Uint8Array): void {
    const msg = Buffer.alloc(FRAME_HEADER + BM_HEADER + bytes.length);
    msg[0] = MSG_NORMAL;
    msg.writeBigUInt64BE(BigInt(BM_HEADER + bytes.length), 1);
    msg.writeInt32LE(PACKET_IN, FRAME_HEADER);
    msg.writeInt32LE(port, FRAME_HEADER + 4);
    msg.writeInt32LE(bytes.length, FRAME_HEADER + 8);
    msg.set(bytes, FRAME_HEADER + BM_HEADER);
    this.#socket.write(msg);
  }

  /** The switch's process id, while it runs. */
  get pid(): number | undefined {
    return this.#child.exitCode === null && this.#child.signalCode === null ? this.#child.pid : undefined;
  }

  /** What simple_switch wrote on stderr so far (and how its ports socket broke, if it did). */
  get stderr(): string {
    const broken = this.#socketError === undefined ? "" : `\n(its ports socket: ${this.#socketError.message})`;
    return this.#stderr() + broken;
  }

  async stop(): Promise<void> {
    this.#socket.destroy();
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise((resolve) => this.#child.once("exit", resolve));
      this.#child.kill("SIGKILL");
      await exited;
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

class ExitedEarly extends Error {}

/** Switches running in this process: killed when it exits (its work done, process.exit, or an uncaught error), so none
 * outlives it. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function open(target: string | number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = typeof target === "number" ? connect(target, "127.0.0.1") : connect(target);
    s.once("connect", () => {
      s.removeAllListeners("error");
      resolve(s);
    });
    s.once("error", reject);
  });
}

async function retry<T>(
  attempt: () => Promise<T>,
  what: string,
  child: ChildProcess,
  stderr: () => string,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new ExitedEarly(
          `simple_switch exited (${child.exitCode ?? child.signalCode}) before ${what} opened: ${stderr()}`,
        );
      if (Date.now() - started > START_MS)
        throw new Error(`${what} did not open in ${START_MS} ms: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** simple_switch_CLI with `commands` on stdin, under Debian's python3 (its python3-thrift), as
 * ../shared/p4-toolchain/README.md says. */
function runCli(tools: P4Tools, thrift: number, commands: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/python3", [tools.simpleSwitchCli, "--thrift-port", String(thrift)], {
      env: tools.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.on("error", reject);
    child.on("close", (status) =>
      status === 0 ? resolve(out) : reject(new Error(`simple_switch_CLI exited ${String(status)}: ${out}`)),
    );
    // A CLI that exits before it has read its commands breaks the pipe: its exit status and output say why.
    child.stdin.on("error", () => undefined);
    child.stdin.end(commands);
  });
}
