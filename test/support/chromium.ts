// One Chromium per mocha process (issue 33: the suite's CPU). Launching Debian's Chromium costs
// about a second of CPU; a file that needs a browser takes the shared one and isolates its tests
// with browser contexts (browser.newPage() or newContext(): their own cookies, storage and cache),
// which it closes itself. Nobody but the run's teardown closes the browser.
import { chromium, type Browser } from 'playwright-core';
import { onTeardown } from './hooks';

// Debian's Chromium, driven by playwright-core: no browser download.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

let launched: Promise<Browser> | undefined;
let registered = false;

/** The process's Chromium, launched on first use (again if it has gone away). */
export async function sharedBrowser(): Promise<Browser> {
  const current = await launched?.catch(() => undefined);
  if (current?.isConnected()) return current;
  launched = chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  if (!registered) {
    registered = true;
    onTeardown(async () => (await launched?.catch(() => undefined))?.close());
  }
  return launched;
}

/** Closes every context left open on the shared browser (a file's `after`): the next file starts clean. */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  if (!browser?.isConnected()) return;
  await Promise.all(browser.contexts().map((c) => c.close().catch(() => undefined)));
}
