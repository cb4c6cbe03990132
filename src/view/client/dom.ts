/// <reference lib="dom.iterable" />
// The page the script runs in: its data, unpacked, its drawing, and how its elements are found
// and made. The script's modules (this folder) run in the browser: they import only types and
// each other, nothing of Node; ../client-script.ts joins them into the page's one script.

import type { PageData } from "../page-data.js";

export const data = await unpack(byId("strata-data").textContent ?? "");
export const canvas = byId("canvas");
export const svg = canvas.querySelector("svg") as SVGSVGElement;

/** The page's data: JSON, gzipped, in base64 (./page.ts packData). */
async function unpack(text: string): Promise<PageData> {
  const json = new Blob([decode64(text)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(json).text()) as PageData;
}

export function byId(id: string): HTMLElement {
  return document.getElementById(id) as HTMLElement;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

export function decode64(text: string): ArrayBuffer {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}
