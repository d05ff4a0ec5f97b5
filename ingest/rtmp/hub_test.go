package rtmp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vidhost/vidhost/ingest/feed"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// hookLog is the service's hooks as the edge calls them (core.Hooks).
type hookLog struct {
	mu     sync.Mutex
	events []string
}

func (h *hookLog) Connected(id, session, protocol string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "connected "+id+" "+protocol)
	return false, nil
}

func (h *hookLog) Disconnected(id, session, reason string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "disconnected "+id+" "+reason)
	return nil
}

func (h *hookLog) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// One hub (SPEC §22): an RTMP encoder is reported to the service (connected), its broadcast is
// the feed the live worker's ffmpeg reads (GET /feed/{ls}: MPEG-TS with its H.264 and AAC,
// from a keyframe), and the service's DELETE drops it with the reason the disconnected hook carries.
func TestRTMPFeedHooksAndDrop(t *testing.T) {
	s, reg, _ := startEdge(t, nil)
	hooks := &hookLog{}
	reg.SetHooks(hooks)
	api := httptest.NewServer(httpapi.Handler(append(feed.Routes(reg), httpapi.DropRoute(reg))...))
	defer api.Close()
	cmd := publish(t, s, goodKey, 30)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	eventually(t, "the connected hook", 10*time.Second, func() bool {
		ev := hooks.list()
		return len(ev) == 1 && ev[0] == "connected ls_rtmp rtmp"
	})

	res, err := http.Get(api.URL + "/feed/ls_rtmp")
	if err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "video/mp2t" {
		t.Fatalf("feed: %v %v", err, res)
	}
	var buf bytes.Buffer
	_, _ = io.CopyN(&buf, res.Body, 200_000) // ~2 s of the test picture
	res.Body.Close()
	file := filepath.Join(t.TempDir(), "feed.ts")
	_ = os.WriteFile(file, buf.Bytes(), 0o644)
	probe := strings.Replace(ffmpegPath(), "ffmpeg", "ffprobe", 1)
	out, err := exec.Command(probe, "-v", "error", "-format_whitelist", "mpegts", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", file).CombinedOutput()
	if got := string(out); err != nil || !strings.Contains(got, "h264,320,240") || !strings.Contains(got, "aac") {
		t.Fatalf("the feed's streams: %v %q", err, got)
	}
	// It starts at a keyframe: the first video frame decodes.
	frames, err := exec.Command(probe, "-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame", "-read_intervals", "%+#1", "-of", "csv=p=0", file).CombinedOutput()
	if err != nil || strings.TrimSpace(string(frames)) != "1" {
		t.Fatalf("the feed's first frame: %v %q", err, frames)
	}

	if res := do(t, http.MethodDelete, api.URL+"/streams/ls_nothing/publisher"); res != http.StatusNotFound {
		t.Fatalf("drop with no publisher: %d", res)
	}
	if res := do(t, http.MethodDelete, api.URL+"/streams/ls_rtmp/publisher?reason=completed"); res != http.StatusOK {
		t.Fatalf("drop: %d", res)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the encoder was not dropped")
	}
	eventually(t, "the disconnected hook", 5*time.Second, func() bool {
		ev := hooks.list()
		return len(ev) == 2 && ev[1] == "disconnected ls_rtmp completed"
	})
}

// The input bounds of the whole broadcast: a picture over 1080p is dropped at its first keyframe,
// with the stable reason the service shows.
func TestRTMPDropsAPictureOver1080p(t *testing.T) {
	s, reg, _ := startEdge(t, nil)
	hooks := &hookLog{}
	reg.SetHooks(hooks)
	args := []string{"-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc=size=2560x1440:rate=5:duration=20",
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "5", "-pix_fmt", "yuv420p", "-f", "flv", "rtmp://" + s.Addr().String() + "/live/" + goodKey}
	cmd := exec.Command(ffmpegPath(), args...)
	if err := cmd.Start(); err != nil {
		t.Skipf("ffmpeg: %v", err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	eventually(t, "the bounds drop", 20*time.Second, func() bool {
		ev := hooks.list()
		return len(ev) == 2 && ev[1] == fmt.Sprintf("disconnected ls_rtmp input out of bounds: %s", "2560x1440 is over 1080p")
	})
}

func do(t *testing.T, method, url string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
