package core

import (
	"math"
	"time"
)

// window is how far back bitrate and fps are measured.
const window = 5 * time.Second

type sample struct {
	at time.Time
	n  int
}

// stats of one publisher's input: bytes and video frames over the last window, keyframe times.
type stats struct {
	byteSamples  []sample
	frameTimes   []time.Time
	keyframes    []time.Time // the last few
	sps          []byte
	width        int
	height       int
	spsFPS       float64
	firstSampled time.Time
}

func trim[T any](xs []T, at func(T) time.Time, since time.Time) []T {
	i := 0
	for i < len(xs) && at(xs[i]).Before(since) {
		i++
	}
	return xs[i:]
}

func (s *stats) bytes(now time.Time, n int) {
	if s.firstSampled.IsZero() {
		s.firstSampled = now
	}
	// One sample per 100 ms at most: bounded memory whatever the packet rate.
	if k := len(s.byteSamples); k > 0 && now.Sub(s.byteSamples[k-1].at) < 100*time.Millisecond {
		s.byteSamples[k-1].n += n
	} else {
		s.byteSamples = append(s.byteSamples, sample{now, n})
	}
	s.byteSamples = trim(s.byteSamples, func(x sample) time.Time { return x.at }, now.Add(-window))
}

func (s *stats) kbps(now time.Time) int {
	s.byteSamples = trim(s.byteSamples, func(x sample) time.Time { return x.at }, now.Add(-window))
	total := 0
	for _, x := range s.byteSamples {
		total += x.n
	}
	span := window
	if el := now.Sub(s.firstSampled); el < span && el > 0 {
		span = el
	}
	if total == 0 || span <= 0 {
		return 0
	}
	return int(math.Round(float64(total) * 8 / span.Seconds() / 1000))
}

func (s *stats) frame(now time.Time, key bool) {
	s.frameTimes = append(s.frameTimes, now)
	s.frameTimes = trim(s.frameTimes, func(t time.Time) time.Time { return t }, now.Add(-window))
	if key {
		s.keyframes = append(s.keyframes, now)
		if len(s.keyframes) > 4 {
			s.keyframes = s.keyframes[len(s.keyframes)-4:]
		}
	}
}

// fps: frames seen over the window (≥ 1 s of them), else the SPS's timing info.
func (s *stats) fps(now time.Time) *float64 {
	s.frameTimes = trim(s.frameTimes, func(t time.Time) time.Time { return t }, now.Add(-window))
	if n := len(s.frameTimes); n >= 2 {
		if span := s.frameTimes[n-1].Sub(s.frameTimes[0]); span >= time.Second {
			v := math.Round(float64(n-1)/span.Seconds()*10) / 10
			return &v
		}
	}
	if s.spsFPS > 0 {
		v := math.Round(s.spsFPS*100) / 100
		return &v
	}
	return nil
}

// keyframeInterval: the mean gap between the last keyframes (nil before two were seen).
func (s *stats) keyframeInterval() *float64 {
	n := len(s.keyframes)
	if n < 2 {
		return nil
	}
	v := math.Round(s.keyframes[n-1].Sub(s.keyframes[0]).Seconds()/float64(n-1)*100) / 100
	return &v
}
