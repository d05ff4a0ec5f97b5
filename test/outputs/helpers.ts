import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { binary } from '../playback/helpers';
import type { Stack } from '../support/stack';

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
