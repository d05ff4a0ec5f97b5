// A WHEP viewer in a Chromium page (test/live/clock.ts's harness): connects, retrying while the
// broadcast's WebRTC rendition is starting (503 webrtc_rendition_pending), and starts measuring.
import type { Page } from 'playwright-core';

export async function whepIn(tab: Page, url: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const err = await tab.evaluate(async (u) => {
      const w = window as unknown as { vhWhep: (u: string, v: HTMLVideoElement) => Promise<unknown>; vhMeasure: (v: HTMLVideoElement) => void };
      const v = document.getElementById('v') as HTMLVideoElement;
      try {
        await w.vhWhep(u, v);
      } catch (e) {
        return String(e);
      }
      w.vhMeasure(v);
      return null;
    }, url);
    if (err === null) return;
    if (!/WHEP 503/.test(err) || Date.now() > until) throw new Error(err);
    await new Promise((r) => setTimeout(r, 500));
  }
}
