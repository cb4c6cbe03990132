// Where a worker thread's module is. A thread runs built JavaScript: under vitest the modules that start threads are
// the TypeScript source (src/…), and their threads run the build's file (dist/src/…, npm run build).

import type { MessagePort } from "node:worker_threads";

/** What a thread beside the data plane starts with: its shared counters and its message port. */
export interface ThreadData {
  readonly control: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A thread that also has a ring of shared memory of its own (the file writer's). */
export interface RingThreadData extends ThreadData {
  readonly ring: SharedArrayBuffer;
}

/** The module at `path` under src/ as built (`run/worker.js`): beside this one when built, else under dist/src/. */
export function threadModule(path: string): URL {
  return import.meta.url.endsWith(".ts")
    ? new URL(`../dist/src/${path}`, import.meta.url)
    : new URL(`./${path}`, import.meta.url);
}
