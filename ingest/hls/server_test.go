package hls

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

func ffmpegPath() string {
	if p := os.Getenv("FFMPEG_PATH"); p != "" {
		return p
	}
	return "ffmpeg"
}

func start(t *testing.T, opts Options) (*Server, *core.Registry, *httptest.Server) {
	reg := core.NewRegistry()
	s := New(reg, opts)
	h := httptest.NewServer(httpapi.Handler(append(s.Routes(), httpapi.StreamsRoute(reg))...))
	t.Cleanup(func() {
		h.Close()
		s.Close()
	})
	return s, reg, h
}

// pushTS is the live session's ffmpeg: a real-time 320x240 H.264 + AAC feed PUT as MPEG-TS.
func pushTS(t *testing.T, url string, seconds int) *exec.Cmd {
	cmd, _ := startFFmpeg(t, "-re",
		"-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", strconv.Itoa(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "25", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-b:a", "64k", "-f", "mpegts", "-method", "PUT", url)
	return cmd
}

// startFFmpeg runs ffmpeg with args (errors only on stderr), killed when the test ends.
func startFFmpeg(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	cmd := exec.Command(ffmpegPath(), append([]string{"-hide_banner", "-loglevel", "error"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("ffmpeg: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, &stderr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func eventually(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	until := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(until) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An ffmpeg-made MPEG-TS PUT to the ingest becomes LL-HLS: parts, preload hints, blocking reload.
func TestIngestBecomesLowLatencyHLS(t *testing.T) {
	t.Parallel()
	s, reg, h := start(t, Options{Grace: time.Second})
	base := h.URL + "/hls/ls_test/720p/"
	ff := pushTS(t, base+"ingest", 8)

	eventually(t, "the muxer", 10*time.Second, func() bool { return s.Renditions() == 1 })
	// The multivariant playlist (gohlslib's own) names the media playlists, relative.
	code, multi := get(t, base+"index.m3u8")
	if code != 200 || !strings.Contains(multi, "#EXT-X-STREAM-INF") {
		t.Fatalf("index.m3u8: %d %s", code, multi)
	}
	video := regexp.MustCompile(`(?m)^(video\w*_stream\.m3u8)$`).FindStringSubmatch(multi)
	if video == nil || !strings.Contains(multi, `TYPE=AUDIO`) {
		t.Fatalf("no video media playlist / audio rendition in %s", multi)
	}
	var media string
	eventually(t, "a media playlist with two segments", 15*time.Second, func() bool {
		_, media = get(t, base+video[1])
		return strings.Count(media, "#EXTINF") >= 2
	})
	for _, tag := range []string{"#EXT-X-PART:", "#EXT-X-PART-INF:PART-TARGET=", "#EXT-X-PRELOAD-HINT:TYPE=PART", "CAN-BLOCK-RELOAD=YES", "PART-HOLD-BACK=", "#EXT-X-PROGRAM-DATE-TIME", "#EXT-X-MAP"} {
		if !strings.Contains(media, tag) {
			t.Errorf("the media playlist has no %s:\n%s", tag, media)
		}
	}
	target := regexp.MustCompile(`PART-TARGET=([0-9.]+)`).FindStringSubmatch(media)
	if f, _ := strconv.ParseFloat(target[1], 64); f <= 0 || f > 0.5 {
		t.Errorf("PART-TARGET %s (want ≤ 0.5 s)", target[1])
	}

	// Blocking reload: ask for the part after the preload hint's; the answer waits for it.
	msn := lastMSN(media)
	start := time.Now()
	code, next := get(t, fmt.Sprintf("%s%s?_HLS_msn=%d&_HLS_part=0", base, video[1], msn+1))
	if code != 200 || lastMSN(next) < msn+1 && !strings.Contains(next, fmt.Sprintf("seg%d", msn+1)) && !strings.Contains(next, "#EXT-X-PART") {
		t.Fatalf("blocking reload: %d\n%s", code, next)
	}
	t.Logf("blocking reload for msn %d answered after %v", msn+1, time.Since(start))
	// A part is served (fMP4).
	part := regexp.MustCompile(`#EXT-X-PART:.*URI="([^"]+)"`).FindStringSubmatch(next)
	if part == nil {
		t.Fatalf("no part in %s", next)
	}
	res, err := http.Get(base + part[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(body) < 100 || string(body[4:8]) != "moof" {
		t.Fatalf("part %s: %d, %d bytes", part[1], res.StatusCode, len(body))
	}
	if code, _ := get(t, base+"nope_seg1.mp4"); code != 404 {
		t.Fatalf("an unknown file: %d", code)
	}
	// Stream health: the edge packages LL-HLS for the stream.
	if code, b := get(t, h.URL+"/streams/ls_test"); code != 200 || !strings.Contains(b, `"llhls":true`) {
		t.Fatalf("health: %d %s", code, b)
	}
	// A second ingest while the first feeds the rendition is refused.
	res2, err := http.Post(base+"ingest", "video/mp2t", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusConflict {
		t.Fatalf("a second ingest: %d", res2.StatusCode)
	}

	// The ingest ends (the encoder stops as at its -t: SIGINT, not the rest of its 8 s): after
	// the grace period the muxer is dropped.
	_ = ff.Process.Signal(os.Interrupt)
	_ = ff.Wait()
	eventually(t, "the muxer dropped after the grace period", 10*time.Second, func() bool { return s.Renditions() == 0 && reg.Len() == 0 })
	if code, _ := get(t, base+"index.m3u8"); code != 404 {
		t.Fatalf("after the drop: %d", code)
	}
}

func lastMSN(playlist string) int {
	seq := regexp.MustCompile(`#EXT-X-MEDIA-SEQUENCE:(\d+)`).FindStringSubmatch(playlist)
	if seq == nil {
		return -1
	}
	n, _ := strconv.Atoi(seq[1])
	return n + strings.Count(playlist, "#EXTINF") - 1
}

// DELETE /hls/{ls} drops the stream's muxers (the broadcast ended) and ends their ingest.
func TestDeleteDropsTheStream(t *testing.T) {
	t.Parallel()
	s, reg, h := start(t, Options{Grace: time.Minute})
	ff := pushTS(t, h.URL+"/hls/ls_del/360p/ingest", 30)
	eventually(t, "the muxer", 10*time.Second, func() bool { return s.Renditions() == 1 })
	req, _ := http.NewRequest(http.MethodDelete, h.URL+"/hls/ls_del", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"dropped":1`) {
		t.Fatalf("DELETE: %d %s", res.StatusCode, b)
	}
	if s.Renditions() != 0 || reg.Len() != 0 {
		t.Fatalf("left %d renditions, %d streams", s.Renditions(), reg.Len())
	}
	done := make(chan error, 1)
	go func() { done <- ff.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the ingest (ffmpeg) was not ended by DELETE")
	}
}

// Hostile ingests: not MPEG-TS, bad names.
func TestIngestRefusesGarbage(t *testing.T) {
	t.Parallel()
	s, _, h := start(t, Options{})
	for _, c := range []struct {
		path, body string
		code       string
	}{
		{"/hls/ls_x/720p/ingest", strings.Repeat("not mpeg-ts ", 1000), "bad_mpegts"},
		{"/hls/ls_x/720p/ingest", "", "bad_mpegts"},
		{"/hls/ls_x/" + strings.Repeat("r", 65) + "/ingest", "", "bad_name"},
		{"/hls/ls.x/720p/ingest", "", "bad_name"},
	} {
		req, _ := http.NewRequest(http.MethodPut, h.URL+c.path, bufio.NewReader(strings.NewReader(c.body)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 400 || !strings.Contains(string(b), c.code) {
			t.Errorf("%s: %d %s", c.path, res.StatusCode, b)
		}
	}
	if code, _ := get(t, h.URL+"/hls/ls_x/720p/index.m3u8"); code != 404 {
		t.Fatalf("no muxer: %d", code)
	}
	if s.Renditions() != 0 {
		t.Fatal("a refused ingest left a muxer")
	}
}

// GET /hls/{ls}/index.m3u8 merges the renditions into one multivariant playlist whose URIs
// resolve under /hls/{ls}/.
func TestStreamMultivariantPlaylist(t *testing.T) {
	t.Parallel()
	s, _, h := start(t, Options{Grace: time.Minute})
	if code, _ := get(t, h.URL+"/hls/ls_m/index.m3u8"); code != 404 {
		t.Fatalf("before any ingest: %d", code)
	}
	pushTS(t, h.URL+"/hls/ls_m/hi/ingest", 20)
	pushTS(t, h.URL+"/hls/ls_m/lo/ingest", 20)
	eventually(t, "two muxers", 10*time.Second, func() bool { return s.Renditions() == 2 })
	var multi string
	eventually(t, "both renditions in the stream's playlist", 15*time.Second, func() bool {
		code, b := get(t, h.URL+"/hls/ls_m/index.m3u8")
		multi = b
		return code == 200 && strings.Count(b, "#EXT-X-STREAM-INF") == 2
	})
	uris := regexp.MustCompile(`(?m)^((hi|lo)/video\w*_stream\.m3u8)$`).FindAllString(multi, -1)
	audio := regexp.MustCompile(`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="([^"]+)".*URI="((hi|lo)/[^"]+)"`).FindStringSubmatch(multi)
	if len(uris) != 2 || audio == nil || strings.Count(multi, "#EXT-X-MEDIA:") != 1 || strings.Count(multi, `AUDIO="`+audio[1]+`"`) != 2 {
		t.Fatalf("merged playlist:\n%s", multi)
	}
	for _, u := range append(uris, audio[2]) {
		if code, b := get(t, h.URL+"/hls/ls_m/"+u); code != 200 || !strings.Contains(b, "#EXT-X-PART") {
			t.Fatalf("%s: %d %s", u, code, b)
		}
	}
}

// Frames lost upstream (a WebRTC publisher's packet loss, the ladder's FIFO dropping on a stalled
// PUT) must not end the rendition. With pic_order_cnt_type 0 (browsers' H.264, x264 with
// B-frames) each lost frame is a gap in picture order; the muxer's DTS extractor counts gaps as
// reordered frames and fails past 10. The packager skips to the next keyframe instead, and the
// playlist keeps growing from there.
func TestLostFramesDoNotEndTheRendition(t *testing.T) {
	t.Parallel()
	s, _, h := start(t, Options{Grace: time.Minute})
	base := h.URL + "/hls/ls_loss/src/"
	// 25 fps, a keyframe a second, B-frames (POC type 0); frames 5-16 of every 25 lost (13 is
	// past the extractor's 10 within a second: the old packager ended the ingest there).
	cmd, stderr := startFFmpeg(t, "-re",
		"-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "12",
		"-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p",
		"-bsf:v", "noise=drop=not(key)*between(mod(n\\,25)\\,5\\,16)",
		"-f", "mpegts", "-method", "PUT", base+"ingest")
	eventually(t, "the muxer", 10*time.Second, func() bool { return s.Renditions() == 1 })
	_, multi := get(t, base+"index.m3u8")
	video := regexp.MustCompile(`(?m)^(video\w*_stream\.m3u8)$`).FindStringSubmatch(multi)
	if video == nil {
		t.Fatalf("no media playlist in %s", multi)
	}
	// Segments of ≥ 1 s: by 10 s of feed, 8 or more segments if the rendition lived on.
	var media string
	eventually(t, "a media playlist with 8 segments", 20*time.Second, func() bool {
		_, media = get(t, base+video[1])
		return lastMSN(media) >= 7
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the encoder's PUT failed (the packager ended the ingest?): %v %s", err, stderr.String())
	}
}
