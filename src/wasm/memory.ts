// Typed views of the data plane's linear memory.
//
// The memory is shared (asconfig.json: a SharedArrayBuffer with a maximum, so that a thread beside the data plane,
// the file writer's, can read records where they lie). `memory.grow` (from any allocation inside wasm) never
// detaches a shared buffer, but every view made on it keeps the old length, and `memory.buffer` is a new
// SharedArrayBuffer from then on. Each accessor here checks whether the buffer changed and re-creates its views, so
// callers may hold a LinearMemory across calls but must not hold a view across a call into wasm.

export class LinearMemory {
  readonly #memory: WebAssembly.Memory;
  #buffer: ArrayBuffer;
  #u8: Uint8Array;
  #u16: Uint16Array;
  #u32: Uint32Array;
  #i32: Int32Array;
  #f64: Float64Array;
  #view: DataView;

  constructor(memory: WebAssembly.Memory) {
    this.#memory = memory;
    this.#buffer = memory.buffer;
    this.#u8 = new Uint8Array(this.#buffer);
    this.#u16 = new Uint16Array(this.#buffer);
    this.#u32 = new Uint32Array(this.#buffer);
    this.#i32 = new Int32Array(this.#buffer);
    this.#f64 = new Float64Array(this.#buffer);
    this.#view = new DataView(this.#buffer);
  }

  #refresh(): void {
    if (this.#memory.buffer === this.#buffer) return;
    this.#buffer = this.#memory.buffer;
    this.#u8 = new Uint8Array(this.#buffer);
    this.#u16 = new Uint16Array(this.#buffer);
    this.#u32 = new Uint32Array(this.#buffer);
    this.#i32 = new Int32Array(this.#buffer);
    this.#f64 = new Float64Array(this.#buffer);
    this.#view = new DataView(this.#buffer);
  }

  get byteLength(): number {
    return this.#memory.buffer.byteLength;
  }
  get u8(): Uint8Array {
    this.#refresh();
    return this.#u8;
  }
  /** Index with `address >>> 1`. */
  get u16(): Uint16Array {
    this.#refresh();
    return this.#u16;
  }
  /** Index with `address >>> 2`. */
  get u32(): Uint32Array {
    this.#refresh();
    return this.#u32;
  }
  /** Index with `address >>> 2`. */
  get i32(): Int32Array {
    this.#refresh();
    return this.#i32;
  }
  /** Index with `address >>> 3`. */
  get f64(): Float64Array {
    this.#refresh();
    return this.#f64;
  }
  get view(): DataView {
    this.#refresh();
    return this.#view;
  }
}
