// Control-time memory for regions the TypeScript side fills (batches, command
// buffers). Never called on the packet path.

/** Allocates `size` zeroed bytes, 16-byte aligned; returns the address. */
export function alloc(size: usize): usize {
  const p = heap.alloc(size);
  memory.fill(p, 0, size);
  return p;
}

/** Returns a region from `alloc`. */
export function free(p: usize): void {
  heap.free(p);
}
