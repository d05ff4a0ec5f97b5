import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { compileRules, frameAncestors, hostAllowed, parseDomain } from '../../lib/protection/domains';
import { cappedMaster, encryptedMediaPlaylist, segmentIv, withoutCmafVariants } from '../../lib/protection/hls';
import { rungRefusal } from '../../lib/protection/enforce';
import { cappedImage, downloadCapRefusal, rungsWithinCap } from '../../lib/protection/images';
import { ipMatches, parseIpClaim } from '../../lib/protection/ip';
import type { PlaybackGrant } from '../../lib/playback/tokens';
import { compileRestriction, viewerAllowed } from '../../lib/protection/restriction';

describe('unit: playback protection (lib/protection)', () => {
  it('normalises allow-list entries: case, IDN, ports, IPv6; refuses wildcards over public suffixes', () => {
    const ok = (s: string) => {
      const p = parseDomain(s);
      assert.ok(p.ok, s);
      return p.text;
    };
    assert.equal(ok('Example.COM'), 'example.com');
    assert.equal(ok('bücher.de'), 'xn--bcher-kva.de');
    assert.equal(ok('*.Bücher.de:8443'), '*.xn--bcher-kva.de:8443');
    assert.equal(ok('[::1]:3000'), '[::1]:3000');
    assert.equal(ok('*'), '*');
    for (const bad of ['*.com', '*.co.uk', '*.github.io', 'http://a.com', 'a.com/x', 'a.*.com', '*.127.0.0.1', 'a.com:70000']) assert.equal(parseDomain(bad).ok, false, bad);
  });

  it('matches hosts: wildcard is subdomains only, a port narrows, none means any', () => {
    const r = compileRules(['*.example.com', 'example.org:8443', 'xn--bcher-kva.de']);
    assert.ok(hostAllowed(r, 'a.b.example.com', 443));
    assert.ok(!hostAllowed(r, 'example.com', 443));
    assert.ok(!hostAllowed(r, 'badexample.com', 443));
    assert.ok(hostAllowed(r, 'example.org', 8443));
    assert.ok(!hostAllowed(r, 'example.org', 443));
    assert.ok(hostAllowed(r, 'xn--bcher-kva.de', 80));
  });

  it('judges the Referer, then the Origin, then allow_no_referrer; own origins always pass', () => {
    const self = new Set(['https://video.example.net']);
    const strict = compileRestriction({ id: 'pr_1', allowed_domains: ['*.example.com'], allow_no_referrer: false });
    assert.ok(viewerAllowed(strict, { referer: 'https://www.example.com/watch?v=1' }, self));
    assert.ok(!viewerAllowed(strict, { referer: 'https://evil.com/', origin: 'https://www.example.com' }, self), 'Referer first');
    assert.ok(viewerAllowed(strict, { origin: 'https://www.example.com' }, self));
    assert.ok(!viewerAllowed(strict, {}, self));
    assert.ok(!viewerAllowed(strict, { origin: 'null' }, self));
    assert.ok(!viewerAllowed(strict, { referer: 'android-app://x/' }, self));
    assert.ok(viewerAllowed(strict, { referer: 'https://video.example.net/player/embed/x' }, self));
    // IDN pages send punycode in Referer, as browsers do.
    const idn = compileRestriction({ id: 'pr_2', allowed_domains: ['xn--bcher-kva.de'], allow_no_referrer: true });
    assert.ok(viewerAllowed(idn, { referer: 'https://bücher.de/' }, self));
    assert.ok(viewerAllowed(idn, {}, self));
  });

  it('builds frame-ancestors sources (any port unless one is named)', () => {
    assert.equal(frameAncestors(compileRules(['*.example.com', 'example.org:8443', '[::1]']), ['https://v.example.net']), "'self' https://v.example.net *.example.com:* example.org:8443 [::1]:*");
    assert.equal(frameAncestors(compileRules(['*']), []), '*');
    assert.equal(frameAncestors([], []), "'self'");
  });

  it('ip claims: addresses and CIDRs, IPv4-mapped clients', () => {
    assert.equal(parseIpClaim('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(parseIpClaim('10.0.0.0/33'), null);
    assert.equal(parseIpClaim('nope'), null);
    assert.ok(ipMatches('10.0.0.0/8', '::ffff:10.9.8.7'));
    assert.ok(!ipMatches('10.0.0.0/8', '11.0.0.1'));
    assert.ok(ipMatches('2001:db8::/32', '2001:db8::1'));
    assert.ok(!ipMatches('203.0.113.7', undefined));
  });

  it('caps the multivariant playlist by the short side, keeping other groups', () => {
    const master = [
      '#EXTM3U',
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="en",URI="subs/en/index.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=426x240,SUBTITLES="subs"',
      '240p/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=640x360,SUBTITLES="subs"',
      '360p/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=720x1280',
      '720p/index.m3u8',
      '',
    ].join('\n');
    const out = cappedMaster(master, 360);
    assert.match(out, /240p\/index/);
    assert.match(out, /360p\/index/);
    assert.doesNotMatch(out, /720p|1280/);
    assert.match(out, /TYPE=SUBTITLES/);
    assert.doesNotMatch(cappedMaster(master, 240), /360p/);
  });

  it('a max_resolution refuses the rungs above it by their name, the source by its size, and never an audio rendition', () => {
    const grant = { maxResolution: 720 } as PlaybackGrant;
    const video = { short_side: 1080 };
    assert.equal(rungRefusal(video, grant, '720p'), null);
    assert.match(rungRefusal(video, grant, '1080p') ?? '', /up to 720p/);
    assert.match(rungRefusal(video, grant, 'source') ?? '', /up to 720p/);
    // Issue 47: the AUDIO group of a 1080p video was refused to a 720p token (no sound).
    for (const audio of ['audio/a0', 'audio/a0-jit', 'audio-64k', 'audio-128k']) assert.equal(rungRefusal(video, grant, audio), null, audio);
    assert.equal(rungRefusal(video, null, '2160p'), null);
  });

  it('leaves the CMAF (HEVC, AV1) variants out of an encrypted video\'s multivariant playlist', () => {
    const master = [
      '#EXTM3U',
      '#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=426x240',
      '240p/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=400000,RESOLUTION=426x240,CODECS="hvc1.1.6.L90.90"',
      '240p-hevc/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=426x240,CODECS="av01.0.04M.08"',
      '240p-av1/index.m3u8',
      '',
    ].join('\n');
    assert.equal(withoutCmafVariants(master), ['#EXTM3U', '#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=426x240', '240p/index.m3u8', ''].join('\n'));
  });

  it('puts an EXT-X-KEY with its own IV before each segment', () => {
    const key = randomBytes(16);
    const text = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:6', '#EXTINF:6.0,', 'seg_00000.ts', '#EXTINF:2.0,', 'seg_00001.ts', '#EXT-X-ENDLIST', ''].join('\n');
    const out = encryptedMediaPlaylist(text, 'https://cdn/v/T/key', key, '240p').split('\n');
    const iv0 = segmentIv(key, '240p', 'seg_00000.ts').toString('hex');
    const iv1 = segmentIv(key, '240p', 'seg_00001.ts').toString('hex');
    assert.notEqual(iv0, iv1);
    assert.deepEqual(out.slice(3, 9), [
      `#EXT-X-KEY:METHOD=AES-128,URI="https://cdn/v/T/key",IV=0x${iv0}`,
      '#EXTINF:6.0,',
      'seg_00000.ts',
      `#EXT-X-KEY:METHOD=AES-128,URI="https://cdn/v/T/key",IV=0x${iv1}`,
      '#EXTINF:2.0,',
      'seg_00001.ts',
    ]);
  });

  it('caps images and downloads at a token\'s max_resolution (issue 33 row 2)', () => {
    const wide = 16 / 9;
    const still = (q: { width?: number; height?: number; fit?: 'preserve' | 'crop' | 'pad' }) => ({ kind: 'thumbnail' as const, ext: 'png' as const, time: 1, fit: q.fit ?? 'preserve', width: q.width, height: q.height });
    assert.deepEqual(cappedImage(still({ width: 1920 }), wide, 240), still({ width: 426 }));
    assert.deepEqual(cappedImage(still({ height: 1080 }), wide, 240), still({ height: 240 }));
    assert.deepEqual(cappedImage(still({ width: 1000, height: 1000, fit: 'crop' }), wide, 240), still({ width: 240, height: 240, fit: 'crop' }));
    // A portrait picture's short side is its width.
    assert.deepEqual(cappedImage(still({ height: 1920 }), 9 / 16, 360), still({ height: 640 }));
    // Within the cap, or the rung's own size: unchanged.
    assert.deepEqual(cappedImage(still({ width: 320 }), wide, 240), still({ width: 320 }));
    assert.deepEqual(cappedImage(still({}), wide, 240), still({}));
    const gif = { kind: 'animated' as const, ext: 'gif' as const, start: 0, end: 2, width: 640, fps: 10 };
    assert.deepEqual(cappedImage(gif, wide, 240), { ...gif, width: 424 });
    const rungs = [
      { name: '240p', width: 426, height: 240, status: 'ready' },
      { name: '720p', width: 1280, height: 720, status: 'ready' },
      { name: '2160p', width: 3840, height: 2160, status: 'ready' },
    ];
    assert.deepEqual(rungsWithinCap(rungs, 240).map((r) => r.name), ['240p']);
    const grant = (maxResolution?: number) => ({ videoUuid: 'v', expiresAt: null, maxResolution }) as unknown as PlaybackGrant;
    // The MP4 is cut from the best rung ≤ 1080p (720p here).
    assert.match(downloadCapRefusal(rungs, 'capped_1080p.mp4', grant(480)) ?? '', /720p/);
    assert.equal(downloadCapRefusal(rungs, 'capped_1080p.mp4', grant(720)), null);
    assert.equal(downloadCapRefusal(rungs, 'capped_1080p.mp4', grant()), null);
    assert.equal(downloadCapRefusal(rungs, 'audio.m4a', grant(240)), null);
  });
});
