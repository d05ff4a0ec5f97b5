package core

import (
	"testing"
	"time"

	"github.com/pion/rtp"
)

type countReader struct{ n int }

func (c *countReader) WritePacket(int, *rtp.Packet) { c.n++ }

func TestReadersAreBoundedAndNeedAnRTPPublisher(t *testing.T) {
	reg := NewRegistry()
	s := reg.Acquire("ls_1")
	if err := s.AddReader(&countReader{}, 2); err != ErrNoPublisher {
		t.Fatalf("no publisher: %v", err)
	}
	p := &Publisher{Protocol: "whip", Tracks: []Track{{Kind: "video", Codec: "h264"}, {Kind: "audio", Codec: "opus"}}}
	s.Publish(p)
	a, b := &countReader{}, &countReader{}
	if s.AddReader(a, 2) != nil || s.AddReader(b, 2) != nil {
		t.Fatal("two readers within the bound")
	}
	if err := s.AddReader(&countReader{}, 2); err != ErrTooManyReaders {
		t.Fatalf("third reader: %v", err)
	}
	s.WritePacket(0, &rtp.Packet{})
	if a.n != 1 || b.n != 1 {
		t.Fatalf("fan-out: %d %d", a.n, b.n)
	}
	if got := len(s.Unpublish(p)); got != 2 || s.Readers() != 0 {
		t.Fatalf("unpublish dropped %d, left %d", got, s.Readers())
	}
	reg.Release("ls_1")
	if reg.Len() != 0 {
		t.Fatal("the registry kept a released stream")
	}
}

func TestHealthMeasuresBitrateKeyframesAndTheSPS(t *testing.T) {
	s := &Stream{ID: "ls_1"}
	if _, ok := s.Health(); ok {
		t.Fatal("an unused stream has health")
	}
	s.Publish(&Publisher{Protocol: "whip", Tracks: []Track{{Kind: "video", Codec: "h264"}, {Kind: "audio", Codec: "opus"}}})
	// 320x240 baseline SPS (x264).
	sps := []byte{0x67, 0x42, 0xc0, 0x0d, 0xd9, 0x01, 0x41, 0xfb, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0xc0, 0xf1, 0x42, 0xa4, 0x80}
	now := time.Now()
	s.stats.firstSampled = now.Add(-2 * time.Second)
	s.stats.byteSamples = []sample{{now.Add(-time.Second), 250_000}}
	s.RecordVideoFrame([][]byte{sps, {0x65, 0x88}})
	s.stats.keyframes = []time.Time{now.Add(-4 * time.Second), now.Add(-2 * time.Second), now}
	h, ok := s.Health()
	if !ok || h.Protocol != "whip" || h.Video == nil || h.Video.Codec != "h264" || h.Audio.Codec != "opus" {
		t.Fatalf("got %+v", h)
	}
	if h.Video.Width != 320 || h.Video.Height != 240 {
		t.Fatalf("resolution from the SPS: %dx%d", h.Video.Width, h.Video.Height)
	}
	if h.BitrateKbps < 900 || h.BitrateKbps > 1100 {
		t.Fatalf("250 kB over 2 s is 1000 kb/s, got %d", h.BitrateKbps)
	}
	if h.KeyframeIntervalS == nil || *h.KeyframeIntervalS != 2 {
		t.Fatalf("keyframe interval %v", h.KeyframeIntervalS)
	}
}
