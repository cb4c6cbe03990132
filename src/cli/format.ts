// Plain-text tables for the CLI, written row by row so long listings can stream.

export interface Column {
  title: string;
  /** Numbers read best right-aligned (the default); names left-aligned. */
  align?: "left" | "right";
  /** Minimum width; a column widens for a wider cell (later rows only: rows are not held back). */
  width?: number;
}

export class TextTable {
  readonly #columns: readonly Column[];
  readonly #widths: number[];
  readonly #indent: string;

  constructor(columns: readonly Column[], indent = "") {
    this.#columns = columns;
    this.#widths = columns.map((c) => Math.max(c.title.length, c.width ?? 0));
    this.#indent = indent;
  }

  header(): string {
    return this.row(this.#columns.map((c) => c.title));
  }

  /** One line, with its newline. */
  row(cells: readonly string[]): string {
    const parts: string[] = [];
    for (let i = 0; i < this.#columns.length; i++) {
      const cell = cells[i] ?? "";
      const width = Math.max(this.#widths[i] ?? 0, cell.length);
      this.#widths[i] = width;
      const last = i === this.#columns.length - 1;
      if (this.#columns[i]?.align === "left") parts.push(last ? cell : cell.padEnd(width));
      else parts.push(cell.padStart(width));
    }
    return `${this.#indent}${parts.join("  ")}\n`;
  }
}

/** A file's size for a person, in decimal units: 931 bytes, 108 MB, 1.19 GB. */
export function fileSize(bytes: number): string {
  if (bytes < 1e6) return `${bytes.toLocaleString("en-US")} bytes`;
  if (bytes < 1e9) return `${Math.round(bytes / 1e6).toLocaleString("en-US")} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}
