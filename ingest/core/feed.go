package core

import (
	"errors"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// Unit is one access unit of a publisher's track as the feed's readers (the ladder's input,
// ingest/feed) receive it: what every protocol hands in, whatever it arrived by.
type Unit struct {
	Track    int
	PTS, DTS time.Duration
	// AU: video, the NAL units (no start codes); AAC, one access unit per element; Opus, packets.
	AU  [][]byte
	Key bool // a video unit a decoder can start at
}

// maxGOPUnits bounds the cache of units since the last keyframe (a feed reader starts there):
// past it (a source without keyframes), nothing is cached until the next one.
const maxGOPUnits = 4096

// subscriptionQueue is how many units a feed reader may fall behind before it is dropped
// (≥ the GOP cache it starts with; about a minute of a 30 fps feed with its audio).
const subscriptionQueue = 8192

// ErrNotReady is Subscribe on a stream whose publisher has no video keyframe yet.
var ErrNotReady = errors.New("no keyframe yet")

// Subscription is one feed reader: the publisher's units from its last keyframe on.
type Subscription struct {
	Tracks []Track
	units  chan *Unit
	closed bool
}

// Units delivers the units; it is closed when the publisher ends or the reader fell behind.
func (sub *Subscription) Units() <-chan *Unit { return sub.units }

// Ready: a publisher with tracks whose video has had a keyframe (a feed can start).
func (s *Stream) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pub != nil && len(s.gop) > 0
}

// Subscribe adds a feed reader; it starts with the units since the last keyframe.
func (s *Stream) Subscribe() (*Subscription, error) {
	sub, err := s.subscribe()
	if errors.Is(err, ErrNotReady) {
		// A WHIP publisher (Chromium) sends a keyframe only when asked: a feed reader that came
		// after the cached GOP was dropped (or before the first keyframe) would otherwise wait
		// for one nobody asked for, and the broadcast never turned active.
		s.RequestKeyframe()
	}
	return sub, err
}

func (s *Stream) subscribe() (*Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil {
		return nil, ErrNoPublisher
	}
	if len(s.gop) == 0 {
		return nil, ErrNotReady
	}
	sub := &Subscription{Tracks: append([]Track(nil), s.pub.Tracks...), units: make(chan *Unit, subscriptionQueue)}
	for _, u := range s.gop {
		sub.units <- u
	}
	if s.subs == nil {
		s.subs = map[*Subscription]struct{}{}
	}
	s.subs[sub] = struct{}{}
	return sub, nil
}

// Unsubscribe ends a feed reader (its reader went away).
func (s *Stream) Unsubscribe(sub *Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endSub(sub)
}

// endSub closes sub's units (callers hold mu).
func (s *Stream) endSub(sub *Subscription) {
	if sub.closed {
		return
	}
	sub.closed = true
	close(sub.units)
	delete(s.subs, sub)
}

// WriteUnit hands one unit of p's track to the feed's readers, after the input bounds
// (bounds.go): past them it returns why, and the caller drops the publisher (Drop).
func (s *Stream) WriteUnit(p *Publisher, u *Unit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != p {
		return nil
	}
	var kind, codec string
	if u.Track >= 0 && u.Track < len(p.Tracks) {
		kind, codec = p.Tracks[u.Track].Kind, p.Tracks[u.Track].Codec
	}
	if kind == "video" {
		switch codec {
		case "h264":
			u.Key = h264.IsRandomAccess(u.AU)
			u.AU = p.withParams(u.Track, u.AU, u.Key)
		case "h265":
			u.Key = h265.IsRandomAccess(u.AU)
		}
		if why := s.bounds.video(codec, u); why != "" {
			return &OutOfBounds{Why: why}
		}
	}
	switch {
	case kind == "video" && u.Key:
		s.gop = append(make([]*Unit, 0, 256), u)
	case len(s.gop) > 0 && len(s.gop) < maxGOPUnits:
		s.gop = append(s.gop, u)
	case len(s.gop) >= maxGOPUnits:
		s.gop = nil
	}
	for sub := range s.subs {
		select {
		case sub.units <- u:
		default: // a reader that fell a minute behind is dropped, never the publisher
			s.endSub(sub)
		}
	}
	return nil
}

// withParams remembers the track's H.264 SPS/PPS (in-band, else its configuration) and puts them
// before a keyframe that lacks them: every reader, and the bounds, see them at each keyframe
// (RTMP carries them only in the sequence header). Callers hold the Stream's mu.
func (p *Publisher) withParams(track int, au [][]byte, key bool) [][]byte {
	if p.params == nil {
		p.params = map[int][2][]byte{}
	}
	ps, ok := p.params[track]
	if !ok && track < len(p.Tracks) {
		ps = [2][]byte{p.Tracks[track].SPS, p.Tracks[track].PPS}
	}
	hasSPS, hasPPS := false, false
	for _, n := range au {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			ps[0], hasSPS = n, true
		case h264.NALUTypePPS:
			ps[1], hasPPS = n, true
		}
	}
	p.params[track] = ps
	if !key || (hasSPS && hasPPS) || ps[0] == nil || ps[1] == nil {
		return au
	}
	out := make([][]byte, 0, len(au)+2)
	if !hasSPS {
		out = append(out, ps[0])
	}
	if !hasPPS {
		out = append(out, ps[1])
	}
	return append(out, au...)
}
