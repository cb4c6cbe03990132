// Writes build/schema/X.cjs for each schema/X.json: ajv's validator for the schema as code
// (ajv's standalone code, with src/description/schema.ts's options), stamped with what it was
// made from. strata loads it in a few ms instead of compiling the schema (~0.25 s of CPU at
// every start that reads a description); a missing or stale one is compiled as before.
// Run by `npm run build:ts`.

import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import { AJV_OPTIONS, readShipped, validatorFile, validatorStamp } from "../src/description/schema.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// ajv's standalone module is CommonJS: ESM's default import of it is its exports, whose default is the function.
const toCode = (standalone as unknown as { default: (ajv: Ajv2020, validate: ValidateFunction) => string }).default;

for (const name of readdirSync(join(root, "schema")).filter((f) => f.endsWith(".schema.json"))) {
  const file = `schema/${name}`;
  const text = readShipped(file);
  const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true } });
  const code = toCode(ajv, ajv.compile(JSON.parse(text) as object));
  const out = join(root, validatorFile(file));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${validatorStamp(text)}\n${code}\n`);
}
