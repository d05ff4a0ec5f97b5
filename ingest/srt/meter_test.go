package srt

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vidhost/vidhost/ingest/core"
)

// An SRT caller's MPEG-TS is measured for GET /streams: tracks, resolution from the SPS, bytes.
func TestMeterReadsTheCallersFeed(t *testing.T) {
	ffmpeg := os.Getenv("FFMPEG_PATH")
	if ffmpeg == "" {
		ffmpeg = "ffmpeg"
	}
	ts := filepath.Join(t.TempDir(), "feed.ts")
	if out, err := exec.Command(ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25", "-f", "lavfi", "-i", "sine",
		"-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac", "-f", "mpegts", ts).CombinedOutput(); err != nil {
		t.Skipf("ffmpeg: %v %s", err, out)
	}
	feed, _ := os.ReadFile(ts)
	reg := core.NewRegistry()
	m := newMeter(reg, "ls_srt", func() {})
	for i := 0; i < len(feed); i += 1316 {
		if _, err := m.Write(feed[i:min(i+1316, len(feed))]); err != nil {
			t.Fatal(err)
		}
	}
	s := reg.Get("ls_srt")
	deadline := 0
	for {
		h, ok := s.Health()
		if ok && h.Video != nil && h.Video.Width == 640 {
			if h.Protocol != "srt" || h.Video.Codec != "h264" || h.Video.Height != 360 || h.Audio == nil || h.Audio.Codec != "aac" || h.BitrateKbps <= 0 || h.KeyframeIntervalS == nil {
				t.Fatalf("health %+v, video %+v", h, h.Video)
			}
			break
		}
		if deadline++; deadline > 100 {
			t.Fatalf("never measured: %+v", h)
		}
		waitABit()
	}
	m.close()
	if reg.Len() != 0 {
		t.Fatal("the stream outlived its caller")
	}
}

func waitABit() { <-time.After(20 * time.Millisecond) }
