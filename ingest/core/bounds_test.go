package core

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// SPSs x264 wrote (ffmpeg testsrc, 640x360 and 3840x2160), as they travel in-band in keyframes.
var (
	sps360p, _  = hex.DecodeString("6742c016da0280bfe5c044000003000400000300783c58ba80")
	sps2160p, _ = hex.DecodeString("6742c033da00f0010fb0110000030001000003001e0f1832a0")
	pps         = []byte{0x68, 0xce, 0x38, 0x80}
	idr         = []byte{0x65, 0x88, 0x80, 0x40}
	nonIDR      = []byte{0x41, 0x9a, 0x02}
)

func videoPublisher(s *Stream) *Publisher {
	p := &Publisher{Protocol: "rtmp", Tracks: []Track{{Kind: "video", Codec: "h264"}}}
	s.Publish(p)
	return p
}

// The bounds of the whole broadcast (the former lib/live/bounds.ts): a switch to 2160p in a
// keyframe's SPS is dropped with the stable reason; a hostile SPS (pic_order_cnt_type 1 with a
// cycle count past 2^32) is refused at once, not parsed for minutes.
func TestBoundsDropAPictureOver1080pMidStream(t *testing.T) {
	s := NewRegistry().Acquire("ls_b")
	p := videoPublisher(s)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	if err := s.WriteUnit(p, &Unit{Track: 0, PTS: 0, DTS: 0, AU: [][]byte{sps360p, pps, idr}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteUnit(p, &Unit{Track: 0, PTS: ms(66), DTS: ms(66), AU: [][]byte{nonIDR}}); err != nil {
		t.Fatal(err)
	}
	err := s.WriteUnit(p, &Unit{Track: 0, PTS: ms(133), DTS: ms(133), AU: [][]byte{sps2160p, pps, idr}})
	if err == nil || err.Error() != "input out of bounds: 3840x2160 is over 1080p" {
		t.Fatalf("2160p: %v", err)
	}
	if SizeOutOfBounds(1080, 1920) != "" || SizeOutOfBounds(1920, 1080) != "" || SizeOutOfBounds(1921, 1080) == "" {
		t.Fatal("portrait and landscape 1080p are within bounds, 1921 wide is not")
	}
	hostile := []byte{0x67, 0x42, 0xc0, 0x16, 0x88, 0x4a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff}
	start := time.Now()
	if err := s.WriteUnit(p, &Unit{Track: 0, PTS: ms(200), DTS: ms(200), AU: [][]byte{hostile, pps, idr}}); err != nil {
		t.Fatalf("an SPS that does not parse is not a size: %v", err)
	}
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Fatalf("a hostile SPS took %v", el)
	}
}

// Frames are counted on timestamps: 90 fps is dropped ("90 fps is over 60"), 60 fps is not.
func TestBoundsCountFramesOnTimestamps(t *testing.T) {
	s := NewRegistry().Acquire("ls_fps")
	p := videoPublisher(s)
	var err error
	for i := 0; i <= 90*6 && err == nil; i++ {
		au := [][]byte{nonIDR}
		if i%90 == 0 {
			au = [][]byte{sps360p, pps, idr}
		}
		d := time.Duration(i) * time.Second / 90
		err = s.WriteUnit(p, &Unit{Track: 0, PTS: d, DTS: d, AU: au})
	}
	if err == nil || !strings.HasSuffix(err.Error(), "90 fps is over 60") {
		t.Fatalf("90 fps: %v", err)
	}
	s2 := NewRegistry().Acquire("ls_60")
	p2 := videoPublisher(s2)
	for i := 0; i <= 60*12; i++ {
		d := time.Duration(i) * time.Second / 60
		if err := s2.WriteUnit(p2, &Unit{Track: 0, PTS: d, DTS: d, AU: [][]byte{nonIDR}}); err != nil {
			t.Fatalf("60 fps at frame %d: %v", i, err)
		}
	}
}

// The bitrate bound is checked as bytes arrive: 16 Mb/s for 30 s passes; 80 Mb/s is dropped
// within 2.5 s of its window with the stable reason.
func TestRateBoundBudget(t *testing.T) {
	b := RateBound{Max: 20_000_000, Window: 10 * time.Second}
	t0 := time.Unix(0, 0)
	for ms := 0; ms < 30_000; ms += 50 {
		if why := b.Add(100_000, t0.Add(time.Duration(ms)*time.Millisecond)); why != "" {
			t.Fatalf("16 Mb/s at %d ms: %s", ms, why)
		}
	}
	fast := RateBound{Max: 20_000_000, Window: 10 * time.Second}
	for ms := 0; ; ms += 50 {
		if why := fast.Add(500_000, t0.Add(time.Duration(ms)*time.Millisecond)); why != "" {
			if ms > 2600 || !strings.HasSuffix(why, " Mb/s is over 20 Mb/s") {
				t.Fatalf("80 Mb/s dropped at %d ms: %q", ms, why)
			}
			return
		}
	}
}

// A feed reader starts at the last keyframe, with its parameter sets, and never holds the publisher.
func TestFeedStartsAtTheLastKeyframe(t *testing.T) {
	s := NewRegistry().Acquire("ls_f")
	p := &Publisher{Protocol: "rtmp", Tracks: []Track{{Kind: "video", Codec: "h264", SPS: sps360p, PPS: pps}}}
	s.Publish(p)
	if _, err := s.Subscribe(); err != ErrNotReady {
		t.Fatalf("before a keyframe: %v", err)
	}
	for i := 0; i < 10; i++ {
		au := [][]byte{nonIDR}
		if i%4 == 0 {
			au = [][]byte{idr}
		}
		d := time.Duration(i) * time.Second / 25
		_ = s.WriteUnit(p, &Unit{Track: 0, PTS: d, DTS: d, AU: au})
	}
	sub, err := s.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	first := <-sub.Units()
	if !first.Key || len(first.AU) != 3 || first.AU[0][0]&0x1f != 7 || first.PTS != 8*time.Second/25 || len(sub.Units()) != 1 {
		t.Fatalf("first unit %+v, %d more", first, len(sub.Units()))
	}
	s.Unpublish(p)
	<-sub.Units()
	if _, open := <-sub.Units(); open {
		t.Fatal("the feed did not end with the publisher")
	}
}
