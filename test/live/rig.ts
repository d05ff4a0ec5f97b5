import { type Browser, chromium } from 'playwright-core';
import type { StackOptions } from '../support/stack';
import { clockSite } from './clock';
import { diagnoseLive, type Edge, type LiveStack, startEdge, startLiveStack } from './helpers';

/** Debian's Chromium, able to publish (fake camera, no prompt) and to play without a gesture. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--autoplay-policy=no-user-gesture-required', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
];

export type ClockSite = Awaited<ReturnType<typeof clockSite>>;
export interface BrowserRig {
  s: LiveStack;
  edge: Edge;
  browser: Browser;
  site: ClockSite;
}

/**
 * The live browser tests' rig, set up by the suite's hooks: a live stack, the real edge on every
 * interface (Chromium gathers no loopback candidates of its own), Chromium and the clock site;
 * the edge's log printed after a failed test; all of it closed after the suite. Read its fields
 * in hooks and tests (they are set once `before` has run).
 */
export function browserRig(opts: StackOptions = {}): BrowserRig {
  const rig = {} as BrowserRig;
  before(async () => {
    rig.s = await startLiveStack(opts);
    [rig.edge, rig.browser, rig.site] = await Promise.all([
      startEdge(rig.s, { LIVE_INGEST_HOST: '0.0.0.0' }),
      chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
      clockSite(rig.s.url),
    ]);
  });
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    console.log(`edge log:\n${rig.edge?.log().slice(-4000)}`);
    if (rig.s) console.log(`live:\n${await diagnoseLive(rig.s, rig.edge)}`);
  });
  after(async () => {
    await rig.browser?.close();
    rig.site?.close();
    await rig.edge?.stop();
    await rig.s?.close();
  });
  return rig;
}
