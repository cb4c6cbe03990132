// A real browser for strata view's page, for its tests (test/view/browser.test.ts) and its
// timing (./view.ts): Debian's chromium, driven by puppeteer-core (which downloads nothing).
// .ci/run installs it and sets STRATA_REQUIRE_BROWSER=1, so that there a missing browser
// fails the tests; elsewhere they are skipped, saying why.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

export const BROWSER_REQUIRED = process.env["STRATA_REQUIRE_BROWSER"] === "1";

/** Where the browser is looked for, in order. */
const PLACES = [process.env["STRATA_BROWSER"], "/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The browser's executable, or why there is none. */
export function findBrowser(): { readonly executable: string } | { readonly missing: string } {
  const executable = PLACES.find((p): p is string => p !== undefined && p !== "" && existsSync(p));
  const tried = PLACES.filter((p) => p !== undefined && p !== "").join(" or ");
  if (executable === undefined)
    return { missing: `no chromium at ${tried}: apt-get install chromium (.ci/run does), or set STRATA_BROWSER` };
  const probe = spawnSync(executable, ["--version"], { encoding: "utf8", timeout: 20_000 });
  if (probe.status !== 0)
    return {
      missing:
        `${executable} --version ` +
        `failed: ${(probe.stderr || probe.stdout || String(probe.error)).trim().split("\n")[0] ?? ""}`,
    };
  return { executable };
}

/** Flags that work on the machines here: no sandbox (root), no GPU, and nothing fetched from the network. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Starts the browser headless with a fresh profile; close() ends it and removes the profile. */
export async function launch(executable: string): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "strata-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: executable,
    headless: true,
    args: [...FLAGS, `--user-data-dir=${profile}`],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
