/**
 * Bytes and quality of the fixed-bitrate ladder against the content-adaptive one (capped CRF),
 * over a corpus this script generates with ffmpeg's lavfi sources, all in ONE run (issue 28):
 *
 *   slides     a slide deck: flat colours and text, a new slide every few seconds
 *   screen     a screen recording: scrolling text and a moving cursor
 *   talking    a talking-head-like still: one subject moving slightly, light sensor noise
 *   motion     high motion: a zooming fractal, every pixel changes every frame
 *   noise      film grain: strong temporal noise over bars
 *   animation  flat-colour animation (testsrc2)
 *
 * Each ladder is the production command (lib/media/chunks.ts chunkLadderArgs: one decode, every
 * rung), video only (audio is its own rendition). Quality is lib/media/quality.ts, the same
 * measurement the pipeline records, against the source scaled to the rung.
 *
 * Goals (issue 28): slides and screen ≤ 0.5× the fixed ladder's bytes with every rung SSIM ≥ 20 dB;
 * motion and noise ≤ 1.05× the bytes with no rung's SSIM lower by more than 0.3 dB; encode time
 * ≤ 1.10×. With --codecs, HEVC and AV1 encode time of one rung as a ratio to H.264.
 *
 *   npm run bench:quality -- [--seconds 10] [--height 1080] [--only slides,screen] [--crf 23] [--codecs] [--codec-height 720]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_RATE_CONTROL, type RateControl } from '../lib/media/args';
import { chunkLadderArgs } from '../lib/media/chunks';
import { cmafRungArgs, type VideoCodec } from '../lib/media/cmaf';
import { planLadder, type Rung } from '../lib/media/ladder';
import { parseQuality, psnrStatsName, qualityArgs, ssimStatsName, type Quality } from '../lib/media/quality';
import { runFfmpeg } from '../lib/media/run';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const seconds = Number(opt('seconds') ?? 10);
const height = Number(opt('height') ?? 1080);
const width = Math.round((height * 16) / 9 / 2) * 2;
const only = opt('only')?.split(',');
const codecs = argv.includes('--codecs');
const codecHeight = Number(opt('codec-height') ?? 720);
const preset = process.env.X264_PRESET ?? 'veryfast';
/** --crf N: try another CRF than the production default for the new ladder. */
const NEW_RC: RateControl = opt('crf') ? { mode: 'crf', crf: Number(opt('crf')) } : DEFAULT_RATE_CONTROL;
const FPS = 30;
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-quality-'));
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

/** lavfi graphs for the corpus, at the bench's size. */
function sources(textFile: string): Record<string, string> {
  const s = `s=${width}x${height}:r=${FPS}:d=${seconds}`;
  const fs1 = Math.max(12, Math.round(height / 30));
  const slide = Math.max(2, seconds / 3);
  const text = (t: string, x: string, y: string, size: number, extra = '') => `drawtext=fontfile=${FONT}:text='${t}':x=${x}:y=${y}:fontsize=${size}:fontcolor=black${extra}`;
  return {
    slides: [
      `color=c=white:${s}`,
      `drawbox=x=0:y=0:w=iw:h=ih/6:color=0x1f3a68:t=fill`,
      `drawtext=fontfile=${FONT}:text='Quarterly review %{eif\\:floor(t/${slide})+1\\:d}':x=w/20:y=h/24:fontsize=${fs1 * 2}:fontcolor=white`,
      ...[0, 1, 2, 3].map((i) => text(`• Point ${i + 1}\\: encoding efficiency matters`, 'w/10', `h/4+${i}*h/8`, fs1 * 1.5, `:enable='gte(t,${i}*${slide}/4)'`)),
      `drawbox=x=iw*0.62:y=ih*0.3:w=iw*0.3:h=ih*0.5:color=0x4a90d9:t=fill:enable='gte(mod(t,${slide * 2}),${slide})'`,
      `drawbox=x=iw*0.62:y=ih*0.3:w=iw*0.3:h=ih*0.5:color=0xe8a33d:t=fill:enable='lt(mod(t,${slide * 2}),${slide})'`,
    ].join(','),
    screen: [
      `color=c=0xf4f4f4:${s}`,
      `drawbox=x=0:y=0:w=iw:h=ih/16:color=0x333333:t=fill`,
      `drawtext=fontfile=${FONT}:textfile=${textFile}:x=w/12:y=h-t*${Math.round(height / 8)}:fontsize=${fs1}:fontcolor=black:line_spacing=${Math.round(fs1 / 2)}`,
      `drawbox=x='iw/3+iw/4*sin(t)':y='ih/2+ih/4*cos(t*0.7)':w=${Math.max(4, Math.round(height / 80))}:h=${Math.max(6, Math.round(height / 50))}:color=black:t=fill`,
    ].join(','),
    talking: [
      `gradients=${s}:speed=0.002:c0=0x304050:c1=0x7a6a5a:n=2`,
      `drawbox=x='iw/2-iw/10+iw/200*sin(2*t)':y='ih/4+ih/150*sin(3*t)':w=iw/5:h=ih/2:color=0xc89a7a:t=fill`,
      `drawbox=x='iw/2-iw/22+iw/200*sin(2*t)':y='ih/3+ih/150*sin(3*t)':w=iw/11:h=ih/30:color=0x3a2a20:t=fill`,
      `noise=alls=3:allf=t`,
    ].join(','),
    motion: `mandelbrot=s=${Math.round(width / 2)}x${Math.round(height / 2)}:r=${FPS}:maxiter=200,scale=${width}:${height},trim=duration=${seconds}`,
    noise: `smptehdbars=${s},noise=alls=30:allf=t+u`,
    animation: `testsrc2=${s}`,
  };
}

async function makeSource(name: string, graph: string): Promise<string> {
  const out = path.join(dir, `${name}.mp4`);
  // Near-lossless intermediate: the reference every rung is measured against.
  await runFfmpeg(['-y', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', graph, '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '6', '-pix_fmt', 'yuv420p', '-g', String(FPS * 2), out]);
  return out;
}

type RungResult = { rung: Rung; bytes: number; quality: Quality | null };

function rungBytes(root: string, rung: Rung, ext: string): number {
  const d = path.join(root, rung.name);
  return fs.readdirSync(d).filter((f) => f.endsWith(ext) || f === 'init.mp4').reduce((sum, f) => sum + fs.statSync(path.join(d, f)).size, 0);
}

/** Joins a rendition's segments into one file for the quality measurement (as the activity does). */
function joined(root: string, rung: Rung, ext: string): string {
  const d = path.join(root, rung.name);
  const files = fs.readdirSync(d).filter((f) => f.endsWith(ext)).sort();
  const out = path.join(d, `joined${ext === '.m4s' ? '.mp4' : ext}`);
  const head = ext === '.m4s' ? [path.join(d, 'init.mp4')] : [];
  fs.writeFileSync(out, Buffer.concat([...head, ...files.map((f) => path.join(d, f))].map((f) => fs.readFileSync(f))));
  return out;
}

async function measure(source: string, root: string, rungs: readonly Rung[], ext = '.ts'): Promise<Array<Quality | null>> {
  const statsDir = fs.mkdtempSync(path.join(root, 'q-'));
  await runFfmpeg(qualityArgs({ source, renditions: rungs.map((r) => ({ input: joined(root, r, ext), width: r.width, height: r.height })), every: 3, statsDir }), { durationSeconds: seconds });
  return rungs.map((_, i) => parseQuality(fs.readFileSync(path.join(statsDir, ssimStatsName(i)), 'utf8'), fs.readFileSync(path.join(statsDir, psnrStatsName(i)), 'utf8')));
}

async function ladder(source: string, label: string, rc: RateControl): Promise<{ seconds: number; rungs: RungResult[] }> {
  const root = fs.mkdtempSync(path.join(dir, `${label}-`));
  const rungs = planLadder({ width, height });
  for (const r of rungs) fs.mkdirSync(path.join(root, r.name));
  const t0 = performance.now();
  await runFfmpeg(chunkLadderArgs({ input: source, outputRoot: root, rungs, chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6, fps: FPS, preset, rateControl: rc }), { durationSeconds: seconds });
  const took = (performance.now() - t0) / 1000;
  const quality = await measure(source, root, rungs);
  return { seconds: took, rungs: rungs.map((rung, i) => ({ rung, bytes: rungBytes(root, rung, '.ts'), quality: quality[i] })) };
}

async function codecSpeed(source: string): Promise<void> {
  const rung = planLadder({ width, height }).find((r) => r.height === Math.min(codecHeight, height)) ?? planLadder({ width, height }).at(-1)!;
  console.log(`\nCODECS: one ${rung.name} rung of "animation", ${seconds} s, capped CRF, encode wall time and bytes`);
  let h264 = 0;
  for (const codec of ['h264', 'hevc', 'av1'] as VideoCodec[]) {
    const root = fs.mkdtempSync(path.join(dir, `codec-${codec}-`));
    fs.mkdirSync(path.join(root, rung.name));
    const t0 = performance.now();
    await runFfmpeg(cmafRungArgs({ input: source, outputDir: path.join(root, rung.name), rung, codec, hasAudio: false, segmentSeconds: 6, fps: FPS }), { durationSeconds: seconds });
    const took = (performance.now() - t0) / 1000;
    if (codec === 'h264') h264 = took;
    const [q] = await measure(source, root, [rung], '.m4s');
    console.log(`  ${codec.padEnd(5)} ${f1(took).padStart(6)} s  ${f2(took / h264)}x H.264   ${String(Math.round(rungBytes(root, rung, '.m4s') / 1024)).padStart(6)} KiB   SSIM ${q ? f2(q.ssim_db) : '?'} dB  PSNR ${q ? f2(q.psnr_db) : '?'} dB`);
  }
}

async function main(): Promise<void> {
  const textFile = path.join(dir, 'text.txt');
  fs.writeFileSync(textFile, Array.from({ length: 80 }, (_, i) => `${String(i + 1).padStart(3)}  const rendition = encode(source, rung[${i % 7}]); // line ${i + 1}`).join('\n'));
  const graphs = sources(textFile);
  const names = Object.keys(graphs).filter((n) => !only || only.includes(n));
  console.log(`corpus: ${names.join(', ')}; ${seconds} s at ${width}x${height}, ${FPS} fps; x264 ${preset}; capped CRF ${NEW_RC.mode === 'crf' ? NEW_RC.crf : ''}`);
  console.log('');
  console.log('source     rung    fixed KiB  SSIM dB  PSNR dB |  new KiB  SSIM dB  PSNR dB | bytes  ΔSSIM');
  let timeOld = 0;
  let timeNew = 0;
  const verdicts: string[] = [];
  for (const name of names) {
    const source = await makeSource(name, graphs[name]);
    // Alternate the order so a busy machine does not favour one ladder.
    const first = names.indexOf(name) % 2 === 0;
    const a = first ? await ladder(source, `${name}-abr`, { mode: 'abr' }) : undefined;
    const b = await ladder(source, `${name}-crf`, NEW_RC);
    const old = a ?? (await ladder(source, `${name}-abr`, { mode: 'abr' }));
    timeOld += old.seconds;
    timeNew += b.seconds;
    let bytesOld = 0;
    let bytesNew = 0;
    let minSsim = Infinity;
    let worstDrop = -Infinity;
    b.rungs.forEach((n, i) => {
      const o = old.rungs[i];
      bytesOld += o.bytes;
      bytesNew += n.bytes;
      const ds = n.quality && o.quality ? n.quality.ssim_db - o.quality.ssim_db : NaN;
      minSsim = Math.min(minSsim, n.quality?.ssim_db ?? -Infinity);
      worstDrop = Math.max(worstDrop, -ds);
      const q = (x: Quality | null) => `${x ? f2(x.ssim_db).padStart(7) : '      ?'}  ${x ? f2(x.psnr_db).padStart(7) : '      ?'}`;
      console.log(
        `${name.padEnd(10)} ${n.rung.name.padEnd(6)} ${String(Math.round(o.bytes / 1024)).padStart(9)}  ${q(o.quality)} | ${String(Math.round(n.bytes / 1024)).padStart(8)}  ${q(n.quality)} | ${f2(n.bytes / o.bytes).padStart(5)}  ${(ds >= 0 ? '+' : '') + f2(ds)}`,
      );
    });
    const ratio = bytesNew / bytesOld;
    console.log(`${name.padEnd(10)} ladder ${String(Math.round(bytesOld / 1024)).padStart(9)}  ${' '.repeat(16)} | ${String(Math.round(bytesNew / 1024)).padStart(8)}  ${' '.repeat(16)} | ${f2(ratio).padStart(5)}   encode ${f1(old.seconds)} s → ${f1(b.seconds)} s`);
    if (name === 'slides' || name === 'screen') verdicts.push(`${name}: bytes ${f2(ratio)}x (goal ≤ 0.50x) ${ratio <= 0.5 ? 'MET' : 'MISSED'}; lowest rung SSIM ${f2(minSsim)} dB (goal ≥ 20) ${minSsim >= 20 ? 'MET' : 'MISSED'}`);
    if (name === 'motion' || name === 'noise') verdicts.push(`${name}: bytes ${f2(ratio)}x (goal ≤ 1.05x) ${ratio <= 1.05 ? 'MET' : 'MISSED'}; worst rung SSIM drop ${f2(worstDrop)} dB (goal ≤ 0.3) ${worstDrop <= 0.3 ? 'MET' : 'MISSED'}`);
  }
  console.log('');
  for (const v of verdicts) console.log(`  ${v}`);
  console.log(`  encode time, all sources: ${f1(timeOld)} s → ${f1(timeNew)} s = ${f2(timeNew / timeOld)}x (goal ≤ 1.10x) ${timeNew / timeOld <= 1.1 ? 'MET' : 'MISSED'}`);
  if (codecs) await codecSpeed(await makeSource('animation', sources(textFile).animation));
}

main()
  .then(() => fs.rmSync(dir, { recursive: true, force: true }))
  .then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
