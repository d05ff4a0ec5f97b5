import { keys } from '../storage';

/** Where the SPEC §14 outputs live, under the video's prefix (so a deletion removes them too). */
export const outputKeys = {
  subtitleDir: (ws: string, vid: string, lang: string) => `${keys.videoPrefix(ws, vid)}hls/subs/${lang}/`,
  subtitlePlaylist: (ws: string, vid: string, lang: string) => `${outputKeys.subtitleDir(ws, vid, lang)}index.m3u8`,
  subtitleFile: (ws: string, vid: string, lang: string) => `${outputKeys.subtitleDir(ws, vid, lang)}captions.vtt`,
  /** The same cues with X-TIMESTAMP-MAP, served as the playlist's segment (subs/<lang>/captions.vtt). */
  subtitleHlsFile: (ws: string, vid: string, lang: string) => `${outputKeys.subtitleDir(ws, vid, lang)}hls.vtt`,
  staticFile: (ws: string, vid: string, name: string) => `${keys.videoPrefix(ws, vid)}static/${name}`,
  storyboardVtt: (ws: string, vid: string) => `${keys.videoPrefix(ws, vid)}storyboard/storyboard.vtt`,
  storyboardJpg: (ws: string, vid: string) => `${keys.videoPrefix(ws, vid)}storyboard/storyboard.jpg`,
  /** A transcript sent to POST …/captions/{language}/align (issue 37); outside `hls/`, so never served. */
  transcript: (ws: string, vid: string, lang: string) => `${keys.videoPrefix(ws, vid)}transcripts/${lang}.txt`,
  /** On-demand images, one object per set of parameters. */
  derived: (ws: string, vid: string, name: string) => `${keys.videoPrefix(ws, vid)}derived/${name}`,
};

/** The master playlist's relative URI of a subtitle playlist. */
export const subtitleUri = (lang: string) => `subs/${lang}/index.m3u8`;
