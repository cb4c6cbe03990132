// One bmv2 simple_switch, for the tests and the bench: started on a compiled program (p4c-bm2-ss's JSON), its
// entries loaded from runtime_cli.txt by simple_switch_CLI's own command loop (several switches' from one Python
// process, cli-many.py: importing the CLI is most of a CLI run's CPU), and its ports on one nanomsg PAIR
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
import { fileURLToPath } from "node:url";
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

  /** simple_switch's Thrift port (start), for simple_switch_CLI. */
  thriftPort = 0;

  /**
   * Starts simple_switch on `json` (the compiled program's bmv2 JSON), its Thrift server up: its
   * entries are load()'s. A switch that exits while starting (its Thrift port taken by another
   * process between our look and its bind) is started again, on another port.
   */
  static async start(tools: P4Tools, json: string, deviceId = 0): Promise<Switch> {
    return Switch.#attempts(() => Switch.#start(tools, { json }, deviceId));
  }

  /**
   * Loads each switch's `commands` (runtime_cli.txt) as `simple_switch_CLI --thrift-port PORT <
   * commands` would, all from one Python process; sets each one's cliOutput and cliErrors.
   */
  static async load(
    tools: P4Tools,
    jobs: readonly { readonly sw: Switch; readonly commands: string }[],
  ): Promise<void> {
    if (jobs.length === 0) return;
    const outputs = await runCli(
      tools,
      JSON.stringify(jobs.map((j) => ({ port: j.sw.thriftPort, commands: j.commands }))),
    );
    jobs.forEach(({ sw }, k) => {
      const cli = outputs[k] ?? "";
      sw.cliOutput = cli;
      sw.cliErrors = cli
        .split("\n")
        .map((l) => l.replace(/^(RuntimeCmd: )+/, ""))
        .filter((l) => /^(Invalid |Error|\*\*\* |Traceback)/.test(l) || /Exception/.test(l));
    });
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
    program: { readonly json: string } | { readonly cpuPort: number | undefined },
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
      sw.thriftPort = thrift;
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

/** cli-many.py, beside this file's source (tsc leaves it out of dist/). */
const CLI_MANY = fileURLToPath(new URL("cli-many.py", import.meta.url)).replace(
  /\/dist\/bench\/p4\/cli-many\.py$/,
  "/bench/p4/cli-many.py",
);

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

/** cli-many.py, started once per process and toolchain (its imports are most of a CLI run's CPU), answering each
 * line of jobs with a line of outputs, in order; it holds this process open only while a load waits on it. */
interface CliServer {
  readonly root: string;
  /** Its stdio are sockets (pipes), which ref() and unref() as it does. */
  readonly child: ChildProcess & { stdin: Socket; stdout: Socket; stderr: Socket };
  readonly waiting: { resolve: (outputs: string[]) => void; reject: (err: Error) => void }[];
}

let cliServer: CliServer | undefined;

/** Holds the process open (a load waits) or lets it exit (none does). */
function hold(server: CliServer, on: boolean): void {
  for (const h of [server.child, server.child.stdin, server.child.stdout, server.child.stderr]) {
    if (on) h.ref();
    else h.unref();
  }
}

function startCli(tools: P4Tools): CliServer {
  const child = spawn("/usr/bin/python3", [CLI_MANY], {
    env: tools.env,
    stdio: ["pipe", "pipe", "pipe"],
  }) as CliServer["child"];
  const server: CliServer = { root: tools.root, child, waiting: [] };
  running.add(child);
  let out = "";
  let err = "";
  const fail = (why: string): void => {
    if (cliServer === server) cliServer = undefined;
    for (const w of server.waiting.splice(0))
      w.reject(new Error(`simple_switch_CLI (cli-many.py): ${why}: ${err}${out}`));
  };
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    out += s;
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      const w = server.waiting.shift();
      if (server.waiting.length === 0) hold(server, false);
      try {
        w?.resolve(JSON.parse(line) as string[]);
      } catch (e) {
        w?.reject(new Error(`simple_switch_CLI (cli-many.py): ${(e as Error).message}: ${err}${line}`));
      }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
  child.on("error", (e) => fail(e.message));
  child.on("close", (status) => {
    running.delete(child);
    fail(`exited ${String(status)}`);
  });
  // A CLI that exits before it has read its commands breaks the pipe: its exit status and output say why.
  child.stdin.on("error", () => undefined);
  return server;
}

/** simple_switch_CLI's modules, the toolchain's, run by cli-many.py on `jobs` (JSON), under Debian's python3 (its
 * python3-thrift), as ../shared/p4-toolchain/README.md says: each job's output. */
function runCli(tools: P4Tools, jobs: string): Promise<string[]> {
  if (cliServer !== undefined && cliServer.root !== tools.root) {
    cliServer.child.stdin.end();
    cliServer = undefined;
  }
  const server = (cliServer ??= startCli(tools));
  return new Promise((resolve, reject) => {
    server.waiting.push({ resolve, reject });
    hold(server, true);
    server.child.stdin.write(`${jobs}\n`);
  });
}
