import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { binary } from '../playback/helpers';
import type { Stack, Workspace } from '../support/stack';
import { putFile } from '../support/flow';
import assert from 'node:assert/strict';

const run = promisify(execFile);

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
}

/** A CDN path (after `{cdn_url}`) fetched through the stack, body as bytes. */
export function cdnGet(s: Stack, pathAfterCdn: string, headers: Record<string, string> = {}) {
  const base = new URL(s.config.cdnUrl).pathname.replace(/\/+$/, '');
  const req = request(s.url).get(`${base}${pathAfterCdn}`);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.buffer(true).parse(binary);
}

/** Writes bytes to a temp file and ffprobes it (streams + format + frame count). */
export async function probeBytes(bytes: Buffer, ext: string, countFrames = false) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-probe-'));
  const file = path.join(dir, `f.${ext}`);
  fs.writeFileSync(file, bytes);
  try {
    const args = ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format'];
    if (countFrames) args.push('-count_frames');
    const { stdout } = await run('ffprobe', [...args, file]);
    return JSON.parse(stdout) as { streams: Array<Record<string, any>>; format: Record<string, any> };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const outputDir = path.join(__dirname, '..', '..', 'test-output');

/** What the burst test and bench/renders.ts configure: the defaults of lib/config/. */
export const BURST_ENV = {
  RENDER_CONCURRENCY: '2',
  RENDER_ANONYMOUS_CONCURRENCY: '1',
  RENDER_QUEUE_MAX: '4',
  RENDER_BUDGET_PER_ADDRESS_PER_MINUTE: '6',
  RENDER_BUDGET_PER_VIDEO_PER_MINUTE: '30',
};

export async function uploadAs(s: Stack, ws: Workspace, file: string, extra: Record<string, unknown> = {}): Promise<string> {
  const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(file).size, content_type: 'video/mp4', ...extra }, ws.fullKey);
  assert.equal(init.status, 201, JSON.stringify(init.body));
  assert.equal((await putFile(init.body.upload_url, file, 'video/mp4', init.body.upload_headers)).status, 200);
  assert.equal((await s.post('/v1/upload/complete', { video_id: init.body.video_id }, ws.fullKey)).status, 202);
  return init.body.video_id;
}

/** 12 distinct anonymous animated GIFs at once (after rounding, too), as the attacker sent. */
export const burstPaths = (id: string) => Array.from({ length: 12 }, (_, i) => `/v/${id}/animated.gif?start=${i * 0.5}&end=${i * 0.5 + 2}&fps=10&width=320`);

