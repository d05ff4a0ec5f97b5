/* The embed player: hls.js over MSE, or the browser's own HLS where that is reliable. */
(function () {
  'use strict';
  var video = document.getElementById('video');
  var message = document.getElementById('message');
  if (!video) return;
  var src = video.getAttribute('data-src');

  function fail(text) {
    message.textContent = text;
    message.hidden = false;
    video.setAttribute('data-state', 'error');
  }

  // Viewer analytics (SPEC §18): sdk/analytics.js is bundled before this file.
  function track(target) {
    var subject = video.getAttribute('data-subject');
    if (!subject || !window.vidhostAnalytics) return;
    try {
      window.vidhostPlayer = window.vidhostPlayer || {};
      window.vidhostPlayer.analytics = window.vidhostAnalytics.attach(target, {
        video: video,
        subject: subject,
        endpoint: video.getAttribute('data-beacons'),
        player: { name: 'vidhost-embed', version: '1' },
      });
    } catch (e) { /* analytics never stops playback */ }
  }

  function play() {
    if (video.autoplay) video.play().catch(function () {});
  }

  // Chrome now answers "maybe" for HLS yet stalls on some streams; trust native HLS only where
  // ManagedMediaSource says this is a modern Safari (hls.js README, video-dev/hls.js#7844).
  // A language menu when the video has more than one audio rendition (SPEC §19).
  function audioMenu(tracks, current, select) {
    var old = document.getElementById('audio-tracks');
    if (old) old.remove();
    if (tracks.length < 2) return;
    var menu = document.createElement('select');
    menu.id = 'audio-tracks';
    menu.className = 'audio-menu';
    menu.setAttribute('aria-label', 'Audio language');
    tracks.forEach(function (t, i) {
      var option = document.createElement('option');
      option.value = String(i);
      option.textContent = t.name || t.lang || 'Audio ' + (i + 1);
      if (t.lang) option.setAttribute('lang', t.lang);
      menu.appendChild(option);
    });
    menu.value = String(current < 0 ? 0 : current);
    menu.addEventListener('change', function () { select(Number(menu.value)); });
    video.parentNode.appendChild(menu);
  }
  // Native HLS (Safari) lists the AUDIO group in video.audioTracks.
  function nativeAudioMenu() {
    var list = video.audioTracks;
    if (!list) return;
    var tracks = [];
    var current = 0;
    for (var i = 0; i < list.length; i++) {
      tracks.push({ name: list[i].label, lang: list[i].language });
      if (list[i].enabled) current = i;
    }
    audioMenu(tracks, current, function (n) {
      for (var j = 0; j < list.length; j++) list[j].enabled = j === n;
    });
  }

  var PAUSED_BUFFER_S = 6;
  var PLAYING_BUFFER_S = 30;
  var PLAYING_MAX_BUFFER_S = 600;

  // A click on the picture before anything has loaded is a wish to play: kept, and granted once
  // the metadata is in (issue 49: such a click did nothing). Later clicks are the controls'.
  video.addEventListener('click', function () {
    if (video.readyState > 0 || !video.paused) return;
    var go = function () { video.play().catch(function () {}); };
    video.addEventListener('loadedmetadata', go, { once: true });
    go();
  });

  /**
   * Captions (issue 49): a CC button and, with several tracks, a language menu. Which track: the
   * page's `?captions=<lang>` (or `off`), else the viewer's last choice on this player (kept in
   * this origin's storage), else the owner's default track, else off; turned on without a
   * language, the viewer's own language, else the first track.
   */
  var STORE = 'vidhost.captions';
  function remembered() { try { return window.localStorage.getItem(STORE); } catch (e) { return null; } }
  function remember(v) { try { window.localStorage.setItem(STORE, v); } catch (e) { /* storage refused: not remembered */ } }
  function captions(api) {
    var tracks = api.list();
    var old = document.getElementById('captions');
    if (old) old.remove();
    if (!tracks.length) return;
    var primary = function (l) { return String(l || '').toLowerCase().split('-')[0]; };
    var find = function (lang) {
      if (!lang) return -1;
      var l = String(lang).toLowerCase();
      for (var i = 0; i < tracks.length; i++) if (tracks[i].lang.toLowerCase() === l) return i;
      for (var j = 0; j < tracks.length; j++) if (primary(tracks[j].lang) === primary(l)) return j;
      return -1;
    };
    var preferred = function () {
      var langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
      for (var i = 0; i < langs.length; i++) {
        var k = find(langs[i]);
        if (k >= 0) return k;
      }
      return 0;
    };
    var bar = document.createElement('div');
    bar.id = 'captions';
    bar.className = 'captions';
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'cc';
    button.textContent = 'CC';
    button.setAttribute('aria-label', 'Captions');
    button.title = 'Captions';
    bar.appendChild(button);
    var menu = null;
    if (tracks.length > 1) {
      menu = document.createElement('select');
      menu.setAttribute('aria-label', 'Captions language');
      tracks.forEach(function (t, i) {
        var o = document.createElement('option');
        o.value = t.lang || String(i);
        o.textContent = t.name || t.lang;
        if (t.lang) o.setAttribute('lang', t.lang);
        menu.appendChild(o);
      });
      bar.appendChild(menu);
    }
    var current = -1;
    var show = function (i, keep) {
      current = i;
      api.select(i);
      button.setAttribute('aria-pressed', i >= 0 ? 'true' : 'false');
      if (menu) {
        menu.hidden = i < 0;
        if (i >= 0) menu.value = tracks[i].lang || String(i);
      }
      if (keep) remember(i >= 0 ? tracks[i].lang || 'on' : 'off');
    };
    button.addEventListener('click', function () { show(current >= 0 ? -1 : preferred(), true); });
    if (menu) menu.addEventListener('change', function () { show(Math.max(0, find(menu.value)), true); });
    video.parentNode.appendChild(bar);
    var asked = new URLSearchParams(location.search).get('captions');
    var wish = asked !== null ? asked : remembered();
    // No wish at all: the track the owner made the default (DEFAULT=YES), if any, else off.
    var byDefault = -1;
    tracks.forEach(function (t, i) { if (t.isDefault && byDefault < 0) byDefault = i; });
    var k = !wish ? byDefault : /^(off|0|false|no)$/i.test(wish) ? -1 : find(wish) >= 0 ? find(wish) : preferred();
    show(k, false);
    // The engine may settle its own default after the tracks are listed: the choice is applied again then.
    return function () { show(current, false); };
  }
  // Native HLS (Safari) lists the SUBTITLES group in video.textTracks.
  function nativeCaptions() {
    var list = Array.prototype.filter.call(video.textTracks || [], function (t) { return t.kind === 'subtitles' || t.kind === 'captions'; });
    captions({
      list: function () { return list.map(function (t) { return { lang: t.language || '', name: t.label || t.language || '' }; }); },
      select: function (i) { list.forEach(function (t, j) { t.mode = j === i ? 'showing' : 'disabled'; }); },
    });
  }

  var native = video.canPlayType('application/vnd.apple.mpegurl');
  if (native && 'ManagedMediaSource' in window) {
    video.setAttribute('data-engine', 'native');
    track(video);
    video.addEventListener('loadedmetadata', nativeAudioMenu);
    video.addEventListener('loadedmetadata', nativeCaptions);
    video.src = src;
    play();
  } else if (window.Hls && window.Hls.isSupported()) {
    video.setAttribute('data-engine', 'hls.js');
    // Caption tracks (the master's SUBTITLES group) become the video's text tracks, which the
    // browser's own controls offer; the DEFAULT=YES one is selected.
    // Until the viewer plays, a few seconds are buffered, not 30: a paused seek then loads its own
    // segment at once instead of waiting behind segments ahead of the start (issue 49: 6.3 s).
    // (hls.js buffers ahead by size too: 60 MB, up to maxMaxBufferLength, 600 s, at a low bitrate.)
    var hls = new window.Hls({ enableWorker: true, subtitleDisplay: false, renderTextTracksNatively: true, maxBufferLength: PAUSED_BUFFER_S, maxMaxBufferLength: PAUSED_BUFFER_S });
    video.addEventListener('play', function () {
      hls.config.maxBufferLength = PLAYING_BUFFER_S;
      hls.config.maxMaxBufferLength = PLAYING_MAX_BUFFER_S;
    }, { once: true });
    window.vidhostPlayer = { hls: hls };
    track(hls);
    live(hls);
    var recovered = false;
    hls.on(window.Hls.Events.ERROR, function (_event, data) {
      if (!data.fatal) return;
      if (data.type === window.Hls.ErrorTypes.MEDIA_ERROR && !recovered) {
        recovered = true;
        hls.recoverMediaError();
        return;
      }
      var status = data.response && data.response.code;
      hls.destroy();
      // A live broadcast that ended: the page comes back as the recording (or "not on air").
      if (video.getAttribute('data-live') && status === 404) return setTimeout(function () { location.reload(); }, 3000);
      fail(status === 403 ? 'This video link has expired or is not allowed. Reload the page to try again.' : 'The video could not be played.');
    });
    hls.on(window.Hls.Events.MANIFEST_PARSED, play);
    var reapply = null;
    hls.on(window.Hls.Events.LEVEL_LOADED, function () { if (reapply) { reapply(); reapply = null; } });
    hls.on(window.Hls.Events.SUBTITLE_TRACKS_UPDATED, function () {
      reapply = captions({
        list: function () { return hls.subtitleTracks.map(function (t) { return { lang: t.lang || '', name: t.name || t.lang || '', isDefault: !!t.default }; }); },
        select: function (i) {
          hls.subtitleTrack = i;
          hls.subtitleDisplay = i >= 0;
        },
      });
    });
    // SPEC §19: the AUDIO group's renditions in a language menu.
    hls.on(window.Hls.Events.AUDIO_TRACKS_UPDATED, function (_event, data) {
      audioMenu(data.audioTracks.map(function (t) { return { name: t.name, lang: t.lang }; }), hls.audioTrack, function (i) { hls.audioTrack = i; });
    });
    hls.on(window.Hls.Events.AUDIO_TRACK_SWITCHED, function (_event, data) {
      var menu = document.getElementById('audio-tracks');
      if (menu) menu.value = String(data.id);
    });
    hls.loadSource(src);
    hls.attachMedia(video);
  } else if (native) {
    video.setAttribute('data-engine', 'native');
    track(video);
    video.src = src;
    play();
  } else {
    fail('This browser cannot play HLS video.');
  }
  video.addEventListener('error', function () {
    if (video.getAttribute('data-engine') === 'native') fail('The video could not be played.');
  });

  // Live (SPEC §17): a LIVE badge, grey when behind the live edge; clicking it jumps to live.
  function live(hls) {
    var badge = document.getElementById('live');
    if (!video.getAttribute('data-live') || !badge) return;
    var behind = function () {
      var edge = hls.liveSyncPosition;
      return edge !== null && edge !== undefined && edge - video.currentTime > 8;
    };
    video.addEventListener('timeupdate', function () { badge.classList.toggle('behind', behind()); });
    badge.addEventListener('click', function () {
      if (hls.liveSyncPosition) video.currentTime = hls.liveSyncPosition;
      video.play().catch(function () {});
    });
  }

  // Seek-bar previews from the storyboard (a WebVTT of `storyboard.jpg#xywh=x,y,w,h` cues), when
  // the video has one: a slim bar under the picture that seeks on click and previews on hover.
  function seconds(ts) {
    var p = ts.split(':').map(Number);
    return p.length === 3 ? p[0] * 3600 + p[1] * 60 + p[2] : p[0] * 60 + p[1];
  }
  function parseStoryboard(text, base) {
    var cues = [];
    var re = /([0-9:.]+)\s+-->\s+([0-9:.]+)\s*\n([^#\s]+)#xywh=(\d+),(\d+),(\d+),(\d+)/g;
    var m;
    while ((m = re.exec(text))) {
      cues.push({ start: seconds(m[1]), end: seconds(m[2]), url: new URL(m[3], base).href, x: +m[4], y: +m[5], w: +m[6], h: +m[7] });
    }
    return cues;
  }
  function storyboard(cues) {
    if (!cues.length) return;
    var player = video.parentNode;
    var bar = document.createElement('div');
    bar.id = 'seekbar';
    bar.className = 'seekbar';
    var fill = document.createElement('div');
    fill.className = 'seekbar-fill';
    bar.appendChild(fill);
    var preview = document.createElement('div');
    preview.id = 'preview';
    preview.className = 'preview';
    preview.hidden = true;
    player.appendChild(preview);
    player.appendChild(bar);
    player.classList.add('has-seekbar');
    var duration = function () {
      return isFinite(video.duration) && video.duration > 0 ? video.duration : cues[cues.length - 1].end;
    };
    var timeAt = function (event) {
      var box = bar.getBoundingClientRect();
      return Math.max(0, Math.min(1, (event.clientX - box.left) / box.width)) * duration();
    };
    bar.addEventListener('mousemove', function (event) {
      var t = timeAt(event);
      var cue = cues.find(function (c) { return t >= c.start && t < c.end; }) || cues[cues.length - 1];
      preview.style.width = cue.w + 'px';
      preview.style.height = cue.h + 'px';
      preview.style.backgroundImage = 'url("' + cue.url + '")';
      preview.style.backgroundPosition = -cue.x + 'px ' + -cue.y + 'px';
      var box = bar.getBoundingClientRect();
      var left = Math.max(0, Math.min(box.width - cue.w, event.clientX - box.left - cue.w / 2));
      preview.style.left = left + 'px';
      preview.setAttribute('data-time', t.toFixed(2));
      preview.setAttribute('data-xywh', [cue.x, cue.y, cue.w, cue.h].join(','));
      preview.hidden = false;
    });
    bar.addEventListener('mouseleave', function () { preview.hidden = true; });
    bar.addEventListener('click', function (event) { video.currentTime = timeAt(event); });
    video.addEventListener('timeupdate', function () { fill.style.width = (100 * video.currentTime / duration()) + '%'; });
  }
  var vtt = video.getAttribute('data-storyboard');
  if (window.fetch && vtt) {
    fetch(vtt).then(function (r) { return r.ok ? r.text() : ''; }).then(function (text) {
      if (text) storyboard(parseStoryboard(text, vtt));
    }).catch(function () {});
  }
})();
