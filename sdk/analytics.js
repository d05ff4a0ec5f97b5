/*
 * vidhost analytics (SPEC §18): counts views of any player and sends them to POST /v1/beacons.
 * Served at {base_url}/sdk/analytics.js; the embed player uses this same file.
 *
 *   <script src="https://video.example.com/sdk/analytics.js"></script>
 *   vidhostAnalytics.attach(hlsOrVideojsOrShakaOrVideoElement, { subject: 'vid_…' });
 *
 * `subject` is the video's id (public/unlisted) or the playback token of a private video.
 * No cookies, no storage: a view is a random id that lives as long as the page.
 */
(function (root, factory) {
  'use strict';
  var api = factory(root);
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.vidhostAnalytics = api;
})(typeof globalThis !== 'undefined' ? globalThis : self, function (root) {
  'use strict';
  var VERSION = '1.0.0';
  var HEARTBEAT_MS = 10000;
  var FLUSH_MS = 1000;
  var MAX_BATCH = 50;
  /** A batch the server did not take is tried again this many times, 2 s × 2^n apart. */
  var RETRIES = 5;
  var RETRY_MS = 2000;

  var script = root.document && root.document.currentScript;
  var defaultEndpoint = script && script.src ? new URL('/v1/beacons', script.src).href : '/v1/beacons';

  function uuid() {
    if (root.crypto && root.crypto.randomUUID) return root.crypto.randomUUID();
    var b = new Uint8Array(16);
    root.crypto.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 0x100).toString(16).slice(1); }).join('');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }

  /**
   * Sends batches: fetch (keepalive, text/plain: no CORS preflight) normally, sendBeacon when the
   * page goes away. Resolves true when the server took the batch (or refused it for good: a 4xx
   * other than 429), false to try again later, or the server's Retry-After in ms (429, 503).
   */
  function httpTransport(endpoint) {
    return function (events, leaving) {
      var body = JSON.stringify(events);
      if (leaving && root.navigator && root.navigator.sendBeacon) {
        if (root.navigator.sendBeacon(endpoint, new Blob([body], { type: 'text/plain' }))) return Promise.resolve(true);
      }
      if (!root.fetch) return Promise.resolve(false);
      return root.fetch(endpoint, { method: 'POST', body: body, keepalive: true, mode: 'cors', credentials: 'omit', headers: { 'Content-Type': 'text/plain' } })
        .then(function (r) {
          if (r.ok || (r.status >= 400 && r.status < 500 && r.status !== 429)) return true;
          var after = Number(r.headers && r.headers.get && r.headers.get('Retry-After'));
          return after > 0 ? Math.min(after, 60) * 1000 : false;
        })
        .catch(function () { return false; });
    };
  }

  /**
   * Follows one <video> element. A view begins at the first play intent (`play`), its startup
   * time ends at the first `playing`; a `waiting` after that (not while seeking) is a rebuffer.
   * Durations come from performance.now(), so batching or a slow network never skews them.
   */
  function Tracker(video, opts) {
    this.video = video;
    this.subject = opts.subject;
    this.player = opts.player || { name: 'html5' };
    this.transport = opts.transport || httpTransport(opts.endpoint || defaultEndpoint);
    this.now = opts.now || function () { return root.performance.now(); };
    this.heartbeatMs = opts.heartbeatMs || HEARTBEAT_MS;
    this.retryMs = opts.retryMs || RETRY_MS;
    this.queue = [];
    this.retrying = [];
    this.rendition = null;
    this.bitrate = null;
    this.sample = null;
    this.view = null;
    this.listeners = [];
    var self = this;
    var on = function (type, fn) {
      video.addEventListener(type, fn);
      self.listeners.push([video, type, fn]);
    };
    on('play', function () { self.onPlay(); });
    on('playing', function () { self.onPlaying(); });
    on('pause', function () {
      if (video.ended || !self.view) return;
      self.stopClock();
      self.send('pause');
    });
    on('waiting', function () { self.onWaiting(); });
    on('timeupdate', function () { if (self.view && self.view.stalled && !video.paused && video.readyState >= 3) self.endStall(); });
    on('seeked', function () { if (self.view) self.send('seeked'); });
    on('ended', function () { self.onEnded(); });
    on('error', function () {
      var e = video.error;
      self.error('media_' + (e && e.code ? e.code : 'error'));
    });
    if (root.addEventListener) {
      var leave = function () { self.end(); };
      root.addEventListener('pagehide', leave);
      self.listeners.push([root, 'pagehide', leave]);
    }
    if (!video.paused && video.readyState >= 3) {
      // Attached late to a video already playing: the view starts now, startup unknown.
      this.onPlay();
      this.onPlaying();
    }
  }

  /**
   * The height the picture is shown at, in device pixels (upscale/downscale against the
   * rendition): the element's box, letterboxed to the picture's aspect ratio.
   */
  Tracker.prototype.displayedHeight = function () {
    var v = this.video;
    var boxW = v.clientWidth || 0;
    var boxH = v.clientHeight || 0;
    if (!boxH) return null;
    var h = v.videoWidth && v.videoHeight ? Math.min(boxH, (boxW * v.videoHeight) / v.videoWidth) : boxH;
    var px = Math.round(h * (root.devicePixelRatio || 1));
    return px >= 1 && px <= 16384 ? px : null;
  };

  /**
   * Live only: seconds behind the live edge. The player's own figure when its adapter has one
   * (hls.js `latency`, Shaka `liveLatency`), else the distance from the end of what is seekable.
   */
  Tracker.prototype.latency = function () {
    var v = this.video;
    var l = null;
    try {
      if (this.latencyOf) l = this.latencyOf();
      else if (v.duration === Infinity && v.seekable && v.seekable.length) l = v.seekable.end(v.seekable.length - 1) - v.currentTime;
    } catch (e) { l = null; /* a player's internals changed: no latency, never an exception */ }
    return typeof l === 'number' && isFinite(l) && l >= 0 && l <= 3600 ? Math.round(l * 1000) / 1000 : null;
  };

  Tracker.prototype.elapsed = function () { return Math.max(0, Math.round(this.now() - this.view.t0)); };

  Tracker.prototype.watchMs = function () {
    var v = this.view;
    return Math.round(v.watched + (v.since !== null ? this.now() - v.since : 0));
  };

  Tracker.prototype.stopClock = function () {
    var v = this.view;
    if (v && v.since !== null) {
      v.watched += this.now() - v.since;
      v.since = null;
    }
  };

  Tracker.prototype.send = function (event, extra) {
    var v = this.view;
    if (!v) return;
    var e = {
      view_id: v.id,
      seq: v.seq++,
      subject: this.subject,
      event: event,
      position: Math.max(0, Math.round((this.video.currentTime || 0) * 1000) / 1000),
      elapsed_ms: this.elapsed(),
      watch_ms: this.watchMs(),
      player: this.player,
    };
    if (this.rendition) e.rendition = this.rendition;
    if (this.bitrate) e.bitrate = this.bitrate;
    var h = this.displayedHeight();
    if (h) e.player_height = h;
    var l = this.latency();
    if (l !== null) e.latency = l;
    if (extra) for (var k in extra) e[k] = extra[k];
    this.queue.push(e);
    if (event === 'viewend') this.flush(true);
    else if (this.queue.length >= MAX_BATCH) this.flush(false);
    else if (!this.timer) {
      var self = this;
      this.timer = setTimeout(function () { self.timer = null; self.flush(false); }, FLUSH_MS);
    }
  };

  /**
   * Sends what is queued. A batch the server did not take (offline, 5xx, 429) is sent again after
   * 2, 4, 8, 16 and 32 s (or the server's Retry-After): a busy server loses no view (issue 45).
   * When the page goes away, batches still waiting for a retry go out with it (sendBeacon).
   */
  Tracker.prototype.flush = function (leaving) {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    var self = this;
    if (leaving) {
      var waiting = this.retrying;
      this.retrying = [];
      waiting.forEach(function (r) { clearTimeout(r.timer); self.deliver(r.batch, true, r.attempt); });
    }
    while (this.queue.length) this.deliver(this.queue.splice(0, MAX_BATCH), leaving, 0);
  };

  Tracker.prototype.deliver = function (batch, leaving, attempt) {
    var self = this;
    Promise.resolve(this.transport(batch, leaving)).then(function (ok) {
      if (ok === true || attempt >= RETRIES) return;
      var r = { batch: batch, attempt: attempt + 1, timer: null };
      var wait = typeof ok === 'number' && ok > 0 ? ok : self.retryMs * Math.pow(2, attempt);
      r.timer = setTimeout(function () {
        self.retrying = self.retrying.filter(function (x) { return x !== r; });
        self.deliver(batch, false, r.attempt);
      }, wait);
      self.retrying.push(r);
    });
  };

  Tracker.prototype.onPlay = function () {
    if (this.view && !this.view.ended) return;
    this.view = { id: uuid(), seq: 0, t0: this.now(), started: false, stalled: false, stallAt: 0, since: null, watched: 0, ended: false };
    this.send('viewstart');
    var self = this;
    this.beat = setInterval(function () { self.heartbeat(); }, this.heartbeatMs);
  };

  Tracker.prototype.onPlaying = function () {
    var v = this.view;
    if (!v) return;
    var wasStalled = v.stalled;
    if (wasStalled) this.endStall();
    if (v.since === null) v.since = this.now();
    if (!v.started) {
      v.started = true;
      this.refresh();
      this.send('playing');
    } else if (!wasStalled) {
      this.send('playing'); // resumed after a pause
    }
  };

  Tracker.prototype.onWaiting = function () {
    var v = this.view;
    if (!v || !v.started || v.stalled || this.video.seeking) return;
    this.stopClock();
    v.stalled = true;
    this.send('rebufferstart');
  };

  Tracker.prototype.endStall = function () {
    var v = this.view;
    v.stalled = false;
    if (v.since === null && !this.video.paused) v.since = this.now();
    this.send('rebufferend');
  };

  Tracker.prototype.onEnded = function () {
    if (!this.view || this.view.ended) return;
    this.stopClock();
    this.send('ended');
    this.finish();
  };

  Tracker.prototype.heartbeat = function () {
    if (!this.view || this.view.ended) return;
    this.refresh();
    if (!this.video.paused || this.view.stalled) this.send('heartbeat');
  };

  Tracker.prototype.refresh = function () {
    if (!this.sample) return;
    try {
      var r = this.sample();
      if (r) this.setRendition(r.name, r.bitrate, true);
    } catch (e) { /* a player's internals changed: no rendition, never an exception */ }
  };

  /** Adapters report the rendition playing; a change is a `rendition` event. */
  Tracker.prototype.setRendition = function (name, bitrate, quiet) {
    var changed = name && name !== this.rendition;
    this.rendition = name || this.rendition;
    this.bitrate = bitrate ? Math.round(bitrate) : this.bitrate;
    if (changed && this.view && this.view.started && !quiet) this.send('rendition');
  };

  Tracker.prototype.error = function (code) {
    if (!this.view) this.onPlay();
    this.send('error', { error_code: String(code).slice(0, 100) });
  };

  Tracker.prototype.finish = function () {
    var v = this.view;
    v.ended = true;
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  };

  /** Ends the view (page going away or player destroyed): `viewend` goes out with sendBeacon. */
  Tracker.prototype.end = function () {
    if (!this.view) return;
    if (!this.view.ended) {
      this.stopClock();
      this.finish();
    }
    if (!this.view.viewend) {
      this.view.viewend = true;
      this.send('viewend');
    }
  };

  Tracker.prototype.destroy = function () {
    this.end();
    this.listeners.forEach(function (l) { l[0].removeEventListener(l[1], l[2]); });
    this.listeners = [];
  };

  function label(height, bitrate) {
    return height ? height + 'p' : bitrate ? Math.round(bitrate / 1000) + 'k' : null;
  }

  /** hls.js: renditions from LEVEL_SWITCHED, fatal errors from ERROR. */
  function attachHls(hls, opts) {
    var start = function (video) {
      var t = new Tracker(video, withPlayer(opts, 'hls.js', hls.constructor && hls.constructor.version));
      hls.on('hlsLevelSwitched', function (_e, data) {
        var l = hls.levels && hls.levels[data.level];
        if (l) t.setRendition(label(l.height, l.bitrate), l.bitrate);
      });
      hls.on('hlsError', function (_e, data) { if (data && data.fatal) t.error('hls_' + data.details); });
      hls.on('hlsDestroying', function () { t.end(); });
      t.latencyOf = function () {
        var l = hls.levels && hls.levels[hls.currentLevel];
        return l && l.details && l.details.live ? hls.latency : null;
      };
      return t;
    };
    if (opts.video || hls.media) return start(opts.video || hls.media);
    var tracker = { pending: true };
    hls.on('hlsMediaAttached', function () { if (tracker.pending) { tracker.pending = false; tracker.inner = start(hls.media); } });
    return tracker;
  }

  /** Shaka Player: renditions from `adaptation`/`variantchanged`, errors from `error`. */
  function attachShaka(player, opts) {
    var video = opts.video || player.getMediaElement();
    var t = new Tracker(video, withPlayer(opts, 'shaka-player', root.shaka && root.shaka.Player && root.shaka.Player.version));
    var active = function () {
      var tracks = player.getVariantTracks ? player.getVariantTracks() : [];
      for (var i = 0; i < tracks.length; i++) if (tracks[i].active) return { name: label(tracks[i].height, tracks[i].bandwidth), bitrate: tracks[i].bandwidth };
      return null;
    };
    t.sample = active;
    t.latencyOf = function () { return player.isLive && player.isLive() ? player.getStats().liveLatency : null; };
    var changed = function () { var r = active(); if (r) t.setRendition(r.name, r.bitrate); };
    player.addEventListener('adaptation', changed);
    player.addEventListener('variantchanged', changed);
    player.addEventListener('error', function (e) { t.error('shaka_' + (e.detail && e.detail.code)); });
    return t;
  }

  /** video.js (with its VHS engine): the rendition is read from VHS at each heartbeat and on `playing`. */
  function attachVideojs(player, opts) {
    var tech = player.tech ? player.tech(true) : null;
    var video = opts.video || (tech && tech.el && tech.el()) || player.el().querySelector('video');
    var t = new Tracker(video, withPlayer(opts, 'video.js', root.videojs && root.videojs.VERSION));
    t.sample = function () {
      var vhs = tech && (tech.vhs || tech.hls);
      var media = vhs && vhs.playlists && vhs.playlists.media && vhs.playlists.media();
      var a = media && media.attributes;
      if (!a) return null;
      return { name: label(a.RESOLUTION && a.RESOLUTION.height, a.BANDWIDTH), bitrate: a.BANDWIDTH };
    };
    player.on('error', function () { var e = player.error(); t.error('videojs_' + (e && e.code)); });
    player.on('dispose', function () { t.end(); });
    return t;
  }

  function withPlayer(opts, name, version) {
    var o = {};
    for (var k in opts) o[k] = opts[k];
    o.player = opts.player || { name: name, version: version ? String(version) : undefined };
    return o;
  }

  /** Attaches to an hls.js instance, a video.js player, a Shaka Player or a bare <video>. */
  function attach(target, opts) {
    if (!opts || !opts.subject) throw new Error('vidhostAnalytics.attach: opts.subject (video id or playback token) is required');
    if (target && typeof target.getMediaElement === 'function') return attachShaka(target, opts);
    if (target && typeof target.loadSource === 'function' && 'levels' in target) return attachHls(target, opts);
    if (target && typeof target.tech === 'function' && typeof target.el === 'function') return attachVideojs(target, opts);
    if (target && typeof target.addEventListener === 'function' && 'currentTime' in target) return new Tracker(target, opts);
    throw new Error('vidhostAnalytics.attach: unsupported player');
  }

  return { attach: attach, Tracker: Tracker, version: VERSION };
});
