// Tiny audio sources (2–4 s) built here by ffmpeg for the SPEC §19 tests, cached by name.
// Each language's track is a sine of its own pitch, so a test can tell which one is heard.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = path.join(os.tmpdir(), 'vidhost-fixtures', 'audio');
const SECONDS = 3;

const video = ['-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=24:duration=${SECONDS}`];
const tone = (hz: number, layout = 'stereo', seconds = SECONDS, volume = 0) => ['-f', 'lavfi', '-i', `sine=frequency=${hz}:sample_rate=48000:duration=${seconds},aformat=channel_layouts=${layout},volume=${volume}dB`];
const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '24'];

export const PITCH = { en: 440, fr: 880, es: 660 };

const RECIPES: Record<string, { ext: string; contentType: string; args: string[] }> = {
  // Two languages, with titles in MKV and bare ISO 639-2 tags in MP4.
  twoLangMkv: {
    ext: 'mkv', contentType: 'video/x-matroska',
    args: [...video, ...tone(PITCH.en), ...tone(PITCH.fr), '-map', '0:v', '-map', '1:a', '-map', '2:a', ...h264, '-c:a', 'aac', '-b:a', '96k',
      '-metadata:s:a:0', 'language=eng', '-metadata:s:a:0', 'title=English', '-metadata:s:a:1', 'language=fre', '-metadata:s:a:1', 'title=Français'],
  },
  twoLangMp4: {
    ext: 'mp4', contentType: 'video/mp4',
    args: [...video, ...tone(PITCH.en), ...tone(PITCH.fr), '-map', '0:v', '-map', '1:a', '-map', '2:a', ...h264, '-c:a', 'aac', '-b:a', '96k',
      '-metadata:s:a:0', 'language=eng', '-metadata:s:a:1', 'language=fra'],
  },
  // A 5.1 track and a stereo one (no language on the second: `und`).
  surround: {
    ext: 'mkv', contentType: 'video/x-matroska',
    args: [...video, ...tone(PITCH.en, '5.1'), ...tone(PITCH.es), '-map', '0:v', '-map', '1:a', '-map', '2:a', ...h264, '-c:a', 'aac', '-b:a', '192k',
      '-metadata:s:a:0', 'language=eng'],
  },
  silentVideo: { ext: 'mp4', contentType: 'video/mp4', args: [...video, ...h264, '-an'] },
  quietVideo: { ext: 'mp4', contentType: 'video/mp4', args: [...video, ...tone(PITCH.en, 'stereo', SECONDS, -32), ...h264, '-c:a', 'aac', '-b:a', '128k'] },
  mp3: { ext: 'mp3', contentType: 'audio/mpeg', args: [...tone(PITCH.en), '-c:a', 'libmp3lame', '-b:a', '64k'] },
  m4a: { ext: 'm4a', contentType: 'audio/mp4', args: [...tone(PITCH.en), '-c:a', 'aac', '-b:a', '64k'] },
  wav: { ext: 'wav', contentType: 'audio/wav', args: [...tone(PITCH.en), '-c:a', 'pcm_s16le'] },
  flac: { ext: 'flac', contentType: 'audio/flac', args: [...tone(PITCH.en), '-c:a', 'flac'] },
  opus: { ext: 'opus', contentType: 'audio/ogg', args: [...tone(PITCH.en), '-c:a', 'libopus', '-b:a', '48k'] },
  // Cover art: an attached picture (a one-frame "video" stream) in an MP3.
  mp3Cover: {
    ext: 'mp3', contentType: 'audio/mpeg',
    args: [...tone(PITCH.en), '-f', 'lavfi', '-i', 'color=c=red:s=200x200:d=1', '-map', '0:a', '-map', '1:v', '-frames:v', '1', '-c:a', 'libmp3lame', '-b:a', '64k',
      '-c:v', 'mjpeg', '-disposition:v', 'attached_pic', '-id3v2_version', '3'],
  },
  // A track to add to a ready video: longer than the 3 s video (cut), in Spanish.
  shortTrack: { ext: 'mp3', contentType: 'audio/mpeg', args: [...tone(PITCH.fr, 'stereo', 1.5), '-c:a', 'libmp3lame', '-b:a', '64k'] },
  longTrack: { ext: 'm4a', contentType: 'audio/mp4', args: [...tone(PITCH.es, 'stereo', 5), '-c:a', 'aac', '-b:a', '96k'] },
};

export type AudioSource = { file: string; contentType: string };

export async function audioSource(name: keyof typeof RECIPES): Promise<AudioSource> {
  const r = RECIPES[name];
  fs.mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, `${name}.${r.ext}`);
  if (!fs.existsSync(file)) {
    const tmp = path.join(cacheDir, `${name}.${process.pid}.tmp.${r.ext}`);
    await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...r.args, tmp]);
    fs.renameSync(tmp, file);
  }
  return { file, contentType: r.contentType };
}

/** A text file that is really an HLS playlist, dressed as an MP3. */
export function hostilePlaylist(): AudioSource {
  fs.mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, 'playlist.mp3');
  fs.writeFileSync(file, '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXTINF:10,\nhttp://169.254.169.254/latest/meta-data\n#EXT-X-ENDLIST\n');
  return { file, contentType: 'audio/mpeg' };
}

/** Integrated loudness (EBU R128) of a file's first audio stream, LUFS, by ffmpeg's ebur128. */
export async function loudnessOf(file: string): Promise<number> {
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-i', file, '-map', '0:a:0', '-af', 'ebur128', '-f', 'null', '-']);
  const m = /Integrated loudness:\s+I:\s+(-?[0-9.]+) LUFS/.exec(stderr);
  if (!m) throw new Error(`no loudness in: ${stderr.slice(-500)}`);
  return Number(m[1]);
}
