const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export type PageState = 'ready' | 'processing' | 'failed' | 'unavailable' | 'not_found' | 'forbidden' | 'restricted' | 'off_air';

export interface PageInput {
  state: PageState;
  title: string;
  assets: { css: string; hls: string; js: string };
  /** `live`: a live stream's playlist (live badge, jump to live; reloads to the recording when it ends). */
  media?: {
    src: string;
    poster: string;
    autoplay: boolean;
    muted: boolean;
    loop: boolean;
    storyboard?: string;
    /** SPEC §19 audio layout: the waveform (poster) above a controls bar, no black picture. */
    audioOnly?: boolean;
    live?: boolean;
    /** SPEC §18: what the analytics sender reports, and where. */
    analytics?: { subject: string; beacons: string };
  };
}

const MESSAGES: Record<Exclude<PageState, 'ready'>, [string, string]> = {
  processing: ['This video is still processing.', 'It will play here as soon as it is ready.'],
  failed: ['This video could not be processed.', 'The owner can upload it again.'],
  unavailable: ['This video is unavailable right now.', 'Its owner has used this month’s streaming allowance.'],
  not_found: ['Video not found.', 'It may have been deleted, or the link is wrong.'],
  forbidden: ['This video is private.', 'It plays only through a valid signed link.'],
  restricted: ['This video cannot be played here.', 'Its owner allows it only on their own sites.'],
  off_air: ['This live stream is not on air.', 'It will play here when the broadcast starts.'],
};

/** The embed page. Every interpolated value goes through `escapeHtml`; scripts are files, never inline. */
export function renderPage(p: PageInput): string {
  const e = escapeHtml;
  const head = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    // Processing pages look again on their own, so an embed starts playing once the video is ready.
    p.state === 'processing' || p.state === 'off_air' ? '<meta http-equiv="refresh" content="10">' : '',
    `<title>${e(p.title)}</title>`,
    `<link rel="stylesheet" href="${e(p.assets.css)}">`,
    '</head>',
  ];
  let body: string;
  if (p.state === 'ready' && p.media) {
    const m = p.media;
    const flags = ['controls', 'playsinline', m.autoplay ? 'autoplay' : '', m.muted ? 'muted' : '', m.loop ? 'loop' : ''].filter(Boolean).join(' ');
    body = [
      '<body data-state="ready">',
      m.audioOnly ? '<div class="player audio-only">' : '<div class="player">',
      m.audioOnly ? `<img id="waveform" class="waveform" src="${e(m.poster)}" alt="">` : '',
      `<video id="video" ${flags} preload="metadata"${m.poster ? ` poster="${e(m.poster)}"` : ''} data-src="${e(m.src)}"${m.storyboard ? ` data-storyboard="${e(m.storyboard)}"` : ''}${m.live ? ' data-live="1"' : ''}${
        m.analytics ? ` data-subject="${e(m.analytics.subject)}" data-beacons="${e(m.analytics.beacons)}"` : ''
      }></video>`,
      m.live ? '<button id="live" class="live-badge" type="button" title="Jump to live">LIVE</button>' : '',
      '<div id="message" class="message" role="alert" hidden></div>',
      '</div>',
      `<script src="${e(p.assets.hls)}"></script>`,
      `<script src="${e(p.assets.js)}"></script>`,
      '</body>',
    ]
      .filter(Boolean)
      .join('\n');
  } else {
    const [line, hint] = MESSAGES[p.state === 'ready' ? 'processing' : p.state];
    body = [
      `<body data-state="${e(p.state)}">`,
      '<div class="player">',
      `<div id="message" class="message" role="status"><span>${e(line)}</span><small>${e(hint)}</small></div>`,
      '</div>',
      '</body>',
    ].join('\n');
  }
  return [...head.filter(Boolean), body, '</html>', ''].join('\n');
}
