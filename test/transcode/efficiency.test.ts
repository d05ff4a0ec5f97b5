import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LADDER } from '../../lib/media/ladder';
import { allRenditionsReady, isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

/**
 * A tiny slide deck (flat colours, text, one slide change), lossless H.264 4:4:4 so it is never
 * eligible for passthrough: every rung is encoded.
 */
async function slides(): Promise<string> {
  const file = path.join(os.tmpdir(), `vh-slides-${process.pid}.mp4`);
  if (fs.existsSync(file)) return file;
  const graph = [
    'color=c=white:s=640x360:r=24:d=6',
    'drawbox=x=0:y=0:w=iw:h=60:color=0x1f3a68:t=fill',
    `drawtext=fontfile=${FONT}:text='Slide %{eif\\:floor(t/3)+1\\:d}':x=20:y=12:fontsize=32:fontcolor=white`,
    `drawtext=fontfile=${FONT}:text='Encoding efficiency':x=40:y=120:fontsize=28:fontcolor=black`,
    "drawbox=x=380:y=120:w=200:h=180:color=0x4a90d9:t=fill:enable='gte(t,3)'",
  ].join(',');
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', graph, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv444p', '-c:a', 'aac', '-b:a', '64k', '-shortest', file]);
  return file;
}

type Variant = { attrs: Record<string, string>; uri: string };
function variants(master: string): Variant[] {
  const lines = master.split('\n');
  const out: Variant[] = [];
  lines.forEach((l, i) => {
    if (!l.startsWith('#EXT-X-STREAM-INF:')) return;
    const attrs: Record<string, string> = {};
    for (const m of l.slice(18).matchAll(/([A-Z-]+)=("[^"]*"|[^,]*)/g)) attrs[m[1]] = m[2].replace(/"/g, '');
    out.push({ attrs, uri: lines[i + 1] });
  });
  return out;
}

/** Peak and average bits/s of a media playlist's segments, as a player downloads them. */
async function measure(url: string): Promise<{ peak: number; average: number; bytes: number; seconds: number }> {
  const text = await (await fetch(url)).text();
  let peak = 0;
  let bytes = 0;
  let seconds = 0;
  let dur = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXTINF:')) dur = Number(line.slice(8).split(',')[0]);
    else if (line && !line.startsWith('#')) {
      const size = (await (await fetch(new URL(line, url))).arrayBuffer()).byteLength;
      bytes += size;
      seconds += dur;
      peak = Math.max(peak, (size * 8) / dur);
    }
  }
  return { peak, average: (bytes * 8) / seconds, bytes, seconds };
}

async function frameHashes(input: string, frames: number): Promise<string[]> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', input, '-map', '0:v:0', '-frames:v', String(frames), '-f', 'framemd5', '-']);
  return stdout.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(',').pop()!.trim());
}

/** Issue 28 (SPEC §21): capped CRF, honest master playlists, measured quality, source as the top rung. */
describe('encoding efficiency (real ffmpeg + Temporal)', function () {
  this.timeout(240_000);
  let s: Stack;
  before(async () => {
    s = await startStack();
  });

  it('a slide deck takes far fewer bytes than the caps; BANDWIDTH/AVERAGE-BANDWIDTH are measured; quality is in the read shape', async () => {
    const { id } = await uploadFormA(s, await slides());
    const v = await waitForVideo(s, id, (x) => allRenditionsReady(x) && x.renditions.every((r: { quality: unknown }) => r.quality !== null), 180_000);
    const master = await (await fetch(v.hls_url)).text();
    const list = variants(master);
    assert.deepEqual(list.map((x) => x.uri), ['240p/index.m3u8', '360p/index.m3u8']);
    // SPEC §19: the video rungs carry no audio; each variant plays with the default AUDIO rendition,
    // whose bits its BANDWIDTH and AVERAGE-BANDWIDTH include (RFC 8216 §4.3.4.2).
    const audioUri = /#EXT-X-MEDIA:TYPE=AUDIO[^\n]*DEFAULT=YES[^\n]*URI="([^"]+)"/.exec(master)?.[1];
    assert.ok(audioUri, 'the master names a default audio rendition');
    const audio = await measure(new URL(audioUri, v.hls_url).toString());
    for (const variant of list) {
      const name = variant.uri.split('/')[0];
      const rung = LADDER.find((r) => r.name === name)!;
      const m = await measure(new URL(variant.uri, v.hls_url).toString());
      const bandwidth = Number(variant.attrs.BANDWIDTH);
      const average = Number(variant.attrs['AVERAGE-BANDWIDTH']);
      // Apple's authoring rules: BANDWIDTH ≥ the peak segment bitrate, AVERAGE-BANDWIDTH within 10% of the average.
      // The audio side is the AAC rendition's nominal rate, not its per-segment peak: its short last
      // segment weighs its fixed TS overhead over a few milliseconds (open in issue 28).
      assert.ok(bandwidth >= m.peak + audio.average, `${name}: BANDWIDTH ${bandwidth} < measured video peak + audio ${Math.round(m.peak + audio.average)}`);
      const both = m.average + audio.average;
      assert.ok(Math.abs(average - both) <= 0.1 * both, `${name}: AVERAGE-BANDWIDTH ${average} vs measured ${Math.round(both)}`);
      assert.match(variant.attrs.CODECS, /^avc1\.6400[0-9a-f]{2},mp4a\.40\.2$/);
      // Far below the caps: the video takes under a quarter of the rung's bitrate. A source the
      // passthrough refuses (this lossless one) plays from on-request rungs (issue 47), whose
      // segments are 2 s with a keyframe each, so the ladder's share is 2 s GOPs too: ~95 kb/s of
      // this 240p deck against ~75 kb/s at the 6 s GOPs it had before (a fifth of the cap then).
      const videoBits = m.bytes * 8;
      assert.ok(videoBits / m.seconds < 0.25 * rung.videoBitrate, `${name}: ${Math.round(videoBits / m.seconds)} b/s of video against a cap of ${rung.videoBitrate}`);
      // The read shape reports what was measured.
      const r = v.renditions.find((x: { name: string }) => x.name === name);
      assert.ok(Math.abs(r.bitrate - m.average) <= 0.1 * m.average, `${name}: read-shape bitrate ${r.bitrate} vs ${Math.round(m.average)}`);
      assert.equal(typeof r.quality.ssim_db, 'number');
      assert.equal(typeof r.quality.psnr_db, 'number');
      // A slide deck stays near-transparent: SSIM ≥ 0.99 (20 dB), PSNR ≥ 35 dB.
      assert.ok(r.quality.ssim_db >= 20, `${name}: SSIM ${r.quality.ssim_db} dB`);
      assert.ok(r.quality.psnr_db >= 35, `${name}: PSNR ${r.quality.psnr_db} dB`);
    }
  });

  it('an eligible source within the top rung’s size and cap IS the top rung (remuxed, not encoded again)', async () => {
    const clip = await makeClip({ width: 640, height: 360, seconds: 4, videoBitrate: 400_000 });
    const { id } = await uploadFormA(s, clip);
    const ready = await waitForVideo(s, id, isStatus('ready'));
    const top = ready.renditions.find((r: { name: string }) => r.name === '360p');
    assert.equal(top.status, 'ready', 'the top rung is ready as soon as the video is');
    const done = await waitForVideo(s, id, allRenditionsReady);
    const master = await (await fetch(done.hls_url)).text();
    assert.doesNotMatch(master, /source\//);
    assert.deepEqual(variants(master).map((x) => x.uri).sort(), ['240p/index.m3u8', '360p/index.m3u8']);
    // The 360p rung decodes to exactly the source's frames: a stream copy.
    const rendition = await s.storage.mediaSource(`videos/${s.ws.id}/${done.uuid}/hls/360p/index.m3u8`);
    assert.deepEqual(await frameHashes(rendition, 5), await frameHashes(clip, 5));
    assert.notDeepEqual(await frameHashes(await s.storage.mediaSource(`videos/${s.ws.id}/${done.uuid}/hls/240p/index.m3u8`), 1), (await frameHashes(clip, 1)));
  });
});
