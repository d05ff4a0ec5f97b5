package rtmp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

const goodKey = "lsk0123456789abcdef0123456789abcdef"

func ffmpegPath() string {
	if p := os.Getenv("FFMPEG_PATH"); p != "" {
		return p
	}
	return "ffmpeg"
}

// keyChecks is a fake media server key check: goodKey → ls_rtmp, anything else refused.
type keyChecks struct {
	mu   sync.Mutex
	apps []string
}

func startEdge(t *testing.T, tweak func(*config.Config)) (*Server, *core.Registry, *keyChecks) {
	t.Helper()
	k := &keyChecks{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Key, App string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		k.mu.Lock()
		k.apps = append(k.apps, body.App)
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if body.Key != goodKey {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"code":"unknown","reason":"unknown stream key"}`))
			return
		}
		_, _ = w.Write([]byte(`{"live_stream_id":"ls_rtmp","workspace_id":"ws_1"}`))
	}))
	t.Cleanup(srv.Close)
	cfg := config.Config{RTMPAddr: "127.0.0.1:0", MaxBitsPerSecond: 20_000_000, RateWindow: 10 * time.Second}
	if tweak != nil {
		tweak(&cfg)
	}
	reg := core.NewRegistry()
	s, err := Listen(cfg, keycheck.New(srv.URL), reg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve() }()
	t.Cleanup(s.Close)
	return s, reg, k
}

// publish runs ffmpeg publishing a test picture to the edge for seconds; bframes: x264 with B-frames.
func publish(t *testing.T, s *Server, key string, seconds int, extra ...string) *exec.Cmd {
	t.Helper()
	args := []string{"-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=320x240:rate=25:duration=%d", seconds),
		"-f", "lavfi", "-i", fmt.Sprintf("sine=duration=%d", seconds), "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p"}
	args = append(args, extra...)
	args = append(args, "-c:a", "aac", "-f", "flv", "rtmp://"+s.Addr().String()+"/live/"+key)
	cmd := exec.Command(ffmpegPath(), args...)
	if err := cmd.Start(); err != nil {
		t.Skipf("ffmpeg: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// rtpReader collects what a core reader (as WHEP's viewer is one) receives.
type rtpReader struct {
	mu       sync.Mutex
	packets  map[int]int
	keyframe bool
	depack   codecs.H264Packet
}

func (r *rtpReader) WritePacket(track int, pkt *rtp.Packet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.packets == nil {
		r.packets = map[int]int{}
	}
	r.packets[track]++
	if nalus, err := r.depack.Unmarshal(pkt.Payload); err == nil && len(nalus) > 0 {
		var au h264.AnnexB
		if au.Unmarshal(nalus) == nil && h264.IsRandomAccess(au) {
			r.keyframe = true
		}
	}
}

func (r *rtpReader) got() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.packets[0], r.keyframe
}

func eventually(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An RTMP encoder's key is checked with app "rtmp"; admitted, it publishes into the core: the
// stream has its tracks and health, and a reader (WHEP's kind) receives its H.264 as RTP,
// keyframes included. When the encoder leaves, the stream goes.
func TestRTMPPublishesIntoTheCore(t *testing.T) {
	s, reg, k := startEdge(t, nil)
	cmd := publish(t, s, goodKey, 4)
	var stream *core.Stream
	eventually(t, "the stream to have tracks", 10*time.Second, func() bool {
		stream = reg.Get("ls_rtmp")
		return stream != nil && len(stream.Tracks()) == 2
	})
	if tr := stream.Tracks(); tr[0].Codec != "h264" || tr[1].Codec != "aac" || stream.Protocol() != "rtmp" {
		t.Fatalf("tracks %+v, protocol %q", tr, stream.Protocol())
	}
	r := &rtpReader{}
	if err := stream.AddReader(r, 10); err != nil {
		t.Fatal(err)
	}
	eventually(t, "RTP with a keyframe", 5*time.Second, func() bool { n, key := r.got(); return n > 20 && key })
	h, _ := stream.Health()
	if h.Video == nil || h.Video.Width != 320 || h.Video.Height != 240 || h.BitrateKbps <= 0 {
		t.Fatalf("health %+v %+v", h, h.Video)
	}
	if stream.Reordered() {
		t.Fatal("x264 ultrafast has no B-frames, yet the stream says it reorders")
	}
	k.mu.Lock()
	if len(k.apps) != 1 || k.apps[0] != "rtmp" {
		t.Fatalf("key checks %v", k.apps)
	}
	k.mu.Unlock()
	_ = cmd.Wait()
	eventually(t, "the stream to go", 5*time.Second, func() bool { return reg.Len() == 0 })
}

// B-frames (OBS's x264 defaults) are seen: the stream says it reorders (WHEP then wants a rendition made for it).
func TestRTMPSourceWithBFramesIsMarked(t *testing.T) {
	s, reg, _ := startEdge(t, nil)
	publish(t, s, goodKey, 3, "-bf", "2", "-x264-params", "b-adapt=0")
	eventually(t, "B-frames to be seen", 10*time.Second, func() bool {
		st := reg.Get("ls_rtmp")
		return st != nil && st.Reordered()
	})
}

// A refused key never publishes: ffmpeg fails, nothing reaches the core.
func TestRTMPRefusesAnUnknownKey(t *testing.T) {
	s, reg, k := startEdge(t, nil)
	cmd := publish(t, s, "lsk"+strings.Repeat("f", 32), 2)
	if err := cmd.Wait(); err == nil {
		t.Fatal("ffmpeg published with an unknown key")
	}
	if reg.Len() != 0 {
		t.Fatal("a refused encoder reached the core")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.apps) != 1 {
		t.Fatalf("key checks %v", k.apps)
	}
}

// Not /live/<key>: refused without asking the key check.
func TestRTMPRefusesOtherPaths(t *testing.T) {
	for _, p := range []string{"/live/notakey", "/srt/" + goodKey, "/live/" + goodKey + "/x"} {
		if _, err := streamKey(p); err == nil {
			t.Fatalf("%s accepted", p)
		}
	}
	if k, err := streamKey("/live/" + goodKey); err != nil || k != goodKey {
		t.Fatalf("%q %v", k, err)
	}
}

// The edge's one input bound applies to RTMP: a publisher over it is dropped.
func TestRTMPDropsAPublisherOverTheBound(t *testing.T) {
	s, reg, _ := startEdge(t, func(c *config.Config) { c.MaxBitsPerSecond = 50_000; c.RateWindow = time.Second })
	cmd := publish(t, s, goodKey, 10, "-b:v", "2M")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
		t.Fatal("a publisher at 2 Mb/s was not dropped by a 50 kb/s bound")
	}
	eventually(t, "the stream to go", 5*time.Second, func() bool { return reg.Len() == 0 })
}
