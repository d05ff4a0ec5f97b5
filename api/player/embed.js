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

  function play() {
    if (video.autoplay) video.play().catch(function () {});
  }

  // Chrome now answers "maybe" for HLS yet stalls on some streams; trust native HLS only where
  // ManagedMediaSource says this is a modern Safari (hls.js README, video-dev/hls.js#7844).
  var native = video.canPlayType('application/vnd.apple.mpegurl');
  if (native && 'ManagedMediaSource' in window) {
    video.setAttribute('data-engine', 'native');
    video.src = src;
    play();
  } else if (window.Hls && window.Hls.isSupported()) {
    video.setAttribute('data-engine', 'hls.js');
    var hls = new window.Hls({ enableWorker: true });
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
      fail(status === 403 ? 'This video link has expired or is not allowed. Reload the page to try again.' : 'The video could not be played.');
    });
    hls.on(window.Hls.Events.MANIFEST_PARSED, play);
    hls.loadSource(src);
    hls.attachMedia(video);
  } else if (native) {
    video.setAttribute('data-engine', 'native');
    video.src = src;
    play();
  } else {
    fail('This browser cannot play HLS video.');
  }
  video.addEventListener('error', function () {
    if (video.getAttribute('data-engine') === 'native') fail('The video could not be played.');
  });
})();
