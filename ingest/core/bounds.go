package core

import (
	"fmt"
	"math"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// The input bounds of SPEC §17 for the whole broadcast, checked on every video unit a publisher
// hands in, before any reader gets it (the former lib/live/bounds.ts of node-media-server days):
// the picture size of every SPS a keyframe carries ≤ 1080p (an encoder that switches to 2160p
// mid-stream is dropped at its first 2160p keyframe), ≤ 60 fps counted on the units' timestamps
// over 5 s of media. The bitrate bound is RateBound (bound.go), on the bytes that arrive.
const (
	maxLong, maxShort = 1920, 1080
	maxFPS            = 60
	fpsWindow         = 5 * time.Second
)

// OutOfBounds is a unit past the input bounds; Why is the stable reason (e.g. "3840x2160 is over 1080p").
type OutOfBounds struct{ Why string }

func (e *OutOfBounds) Error() string { return "input out of bounds: " + e.Why }

// unitBounds is one publisher's state of the bounds (reset on Publish).
type unitBounds struct {
	fpsStart time.Duration
	frames   int
	started  bool
}

func (b *unitBounds) video(codec string, u *Unit) string {
	if why := b.fps(u.DTS); why != "" {
		return why
	}
	if !u.Key {
		return ""
	}
	for _, n := range u.AU {
		if len(n) == 0 {
			continue
		}
		var w, h int
		switch {
		case codec == "h264" && h264.NALUType(n[0]&0x1f) == h264.NALUTypeSPS:
			var sps h264.SPS
			if sps.Unmarshal(n) != nil {
				continue
			}
			w, h = sps.Width(), sps.Height()
		case codec == "h265" && h265.NALUType((n[0]>>1)&0x3f) == h265.NALUType_SPS_NUT:
			var sps h265.SPS
			if sps.Unmarshal(n) != nil {
				continue
			}
			w, h = sps.Width(), sps.Height()
		default:
			continue
		}
		if why := SizeOutOfBounds(w, h); why != "" {
			return why
		}
	}
	return ""
}

// SizeOutOfBounds says why a picture size is over 1080p ("" within).
func SizeOutOfBounds(w, h int) string {
	long, short := max(w, h), min(w, h)
	if long > maxLong || short > maxShort {
		return fmt.Sprintf("%dx%d is over 1080p", w, h)
	}
	return ""
}

// fps counts frames over fpsWindow of media time.
func (b *unitBounds) fps(dts time.Duration) string {
	if !b.started || dts < b.fpsStart {
		b.started, b.fpsStart, b.frames = true, dts, 0
	}
	b.frames++
	span := dts - b.fpsStart
	if span < fpsWindow {
		return ""
	}
	fps := float64(b.frames-1) / span.Seconds()
	b.fpsStart, b.frames = dts, 1
	if fps > maxFPS+0.5 {
		return fmt.Sprintf("%d fps is over %d", int(math.Round(fps)), maxFPS)
	}
	return ""
}
