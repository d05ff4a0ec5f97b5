package webrtc

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	pion "github.com/pion/webrtc/v4"

	"github.com/vidhost/vidhost/ingest/core"
)

// The WebRTC rendition: ffmpeg PUTs H.264 (no B-frames) + Opus MPEG-TS as the live worker's does;
// a WHEP viewer that requires it waits (503) until it starts, then gets its video and audio; its
// end drops the viewer and frees the stream.
func TestRenditionIngestIsServedOverWHEP(t *testing.T) {
	e := startEdge(t, nil)
	viewer, videoPkts, audioPkts := newViewer(t)
	defer viewer.Close()
	if res, body := post(t, e.http.URL+"/whep/ls_rend?rendition=required", "application/sdp", viewer.LocalDescription().SDP); res.StatusCode != http.StatusServiceUnavailable || errorCode(body) != "rendition_pending" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("WHEP before the rendition: %d %s", res.StatusCode, body)
	}

	ff := exec.Command(ffmpegPath(), "-hide_banner", "-loglevel", "error", "-re",
		"-f", "lavfi", "-i", "testsrc2=size=320x240:rate=15", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", "6", "-c:v", "libx264", "-profile:v", "baseline", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "15",
		"-c:a", "libopus", "-b:a", "48k", "-f", "mpegts", "-method", "PUT", e.http.URL+"/webrtc/ls_rend/ingest")
	var stderr strings.Builder
	ff.Stderr = &stderr
	if err := ff.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ff.Wait() }()
	eventually(t, "the rendition published", 10*time.Second, func() bool {
		st := e.reg.Get(core.RenditionID("ls_rend"))
		return st != nil && len(st.Tracks()) == 2
	})
	res, answer := post(t, e.http.URL+"/whep/ls_rend?rendition=required", "application/sdp", viewer.LocalDescription().SDP)
	if res.StatusCode != http.StatusCreated || !strings.HasPrefix(res.Header.Get("Location"), "/whep/ls_rend/") {
		t.Fatalf("WHEP: %d %s", res.StatusCode, answer)
	}
	if err := viewer.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the viewer receiving the rendition's video and audio", 10*time.Second, func() bool { return videoPkts.Load() > 30 && audioPkts.Load() > 20 })
	if n := e.reg.Get(core.RenditionID("ls_rend")).Readers(); n != 1 {
		t.Fatalf("rendition readers %d", n)
	}
	// A body that is not MPEG-TS is refused.
	if res, body := post(t, e.http.URL+"/webrtc/ls_rend/ingest", "video/mp2t", ""); res.StatusCode == http.StatusNoContent {
		t.Fatalf("an empty ingest: %d %s", res.StatusCode, body)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("ffmpeg: %v %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ffmpeg did not end")
	}
	eventually(t, "the viewer dropped and the stream freed at the ingest's end", 10*time.Second, func() bool { return e.s.Sessions() == 0 && e.reg.Len() == 0 })
}

// Which stream a WHEP viewer reads: the rendition when it runs; a source with B-frames, HEVC or
// AAC audio only through one (503 until it starts); an H.264 source without them as is.
func TestWHEPSourceChoice(t *testing.T) {
	e := startEdge(t, nil)
	publish := func(id string, codec string, reordered bool, audio ...string) {
		st := e.reg.Acquire(id)
		tracks := []core.Track{{Kind: "video", Codec: codec}}
		for _, a := range audio {
			tracks = append(tracks, core.Track{Kind: "audio", Codec: a})
		}
		pub := &core.Publisher{Protocol: "rtmp", Tracks: tracks}
		st.Publish(pub)
		if codec == "h264" {
			pts := time.Duration(0)
			if reordered {
				pts = 66 * time.Millisecond
			}
			st.WriteH264(pub, 0, pts, 0, [][]byte{{0x65, 0x88, 0x84}})
		}
	}
	publish("ls_plain", "h264", false)
	publish("ls_opus", "h264", false, "opus")
	publish("ls_aac", "h264", false, "aac")
	publish("ls_bframes", "h264", true, "aac")
	publish("ls_hevc", "h265", false, "aac")
	for _, c := range []struct {
		id        string
		rendition string
		want      string
		pending   bool
	}{
		{"ls_plain", "", "ls_plain", false},
		{"ls_plain", "required", "", true},
		{"ls_opus", "", "ls_opus", false},
		{"ls_aac", "", "", true}, // its video alone would leave the viewer silent
		{"ls_aac", "off", "ls_aac", false},
		{"ls_bframes", "", "", true},
		{"ls_bframes", "off", "", true},
		{"ls_hevc", "", "", true},
		{"ls_none", "", "ls_none", false},
	} {
		got, err := e.s.whepSource(c.id, c.rendition)
		if got != c.want || (err == errRenditionPending) != c.pending {
			t.Fatalf("%s rendition=%q: %q %v", c.id, c.rendition, got, err)
		}
	}
	// With a rendition published, every one of them is served from it.
	for _, id := range []string{"ls_plain", "ls_aac", "ls_bframes", "ls_hevc"} {
		st := e.reg.Acquire(core.RenditionID(id))
		st.Publish(&core.Publisher{Protocol: "rendition", Tracks: []core.Track{{Kind: "video", Codec: "h264"}}})
		for _, rendition := range []string{"", "required", "off"} {
			if got, err := e.s.whepSource(id, rendition); err != nil || got != core.RenditionID(id) {
				t.Fatalf("%s with a rendition: %q %v", id, got, err)
			}
		}
	}
}
