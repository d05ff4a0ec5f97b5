package webrtc

import (
	"sync"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/samplebuilder"

	"github.com/vidhost/vidhost/ingest/core"
)

// republisher turns the WHIP publisher's RTP into the stream core's units (the feed the ladder
// reads, core.WriteUnit): H.264 access units rebuilt from the RTP (starting on a keyframe) and
// Opus packets, timestamped from the publisher's RTP clocks. It never blocks on a reader.
type republisher struct {
	stream *core.Stream // nil: no live stream id, nothing to publish
	pub    *core.Publisher

	mu      sync.Mutex
	builder map[int]*samplebuilder.SampleBuilder
	clock   map[int]*clock
	t0      time.Time
	started bool // a keyframe was written: the feed starts there
	lastKey time.Time
	stopped bool
}

// clock unwraps one track's 32-bit RTP timestamps into 90 kHz PTS from the republisher's start.
type clock struct {
	rate   int64
	prev   uint32
	ext    int64
	offset int64 // 90 kHz: when the track's first packet came, after t0
	init   bool
}

func (c *clock) pts(ts uint32, now, t0 time.Time) int64 {
	if !c.init {
		c.init, c.prev = true, ts
		c.offset = int64(now.Sub(t0)) * 90000 / int64(time.Second)
	}
	c.ext += int64(int32(ts - c.prev))
	c.prev = ts
	return c.offset + c.ext*90000/c.rate
}

func newRepublisher(tracks []*pion.TrackRemote) *republisher {
	r := &republisher{builder: map[int]*samplebuilder.SampleBuilder{}, clock: map[int]*clock{}, t0: time.Now()}
	audio := false
	for i, t := range tracks {
		if t.Kind() == pion.RTPCodecTypeVideo {
			r.builder[i] = samplebuilder.New(256, &codecs.H264Packet{}, 90000, samplebuilder.WithMaxTimeDelay(time.Second))
			r.clock[i] = &clock{rate: 90000}
		} else if !audio {
			audio = true
			r.clock[i] = &clock{rate: 48000}
		}
	}
	return r
}

func dur(ticks90k int64) time.Duration { return time.Duration(ticks90k) * time.Second / 90000 }

// writeVideo pushes one H.264 RTP packet; it returns the last access unit completed (for the
// stats). The units are handed to the core outside the lock.
func (r *republisher) writeVideo(i int, pkt *rtp.Packet) [][]byte {
	var units []*core.Unit
	var last [][]byte
	r.mu.Lock()
	b := r.builder[i]
	if b == nil || r.stopped {
		r.mu.Unlock()
		return nil
	}
	b.Push(pkt)
	for {
		smp := b.Pop()
		if smp == nil {
			break
		}
		var au h264.AnnexB
		if err := au.Unmarshal(smp.Data); err != nil || len(au) == 0 {
			continue
		}
		last = au
		if h264.IsRandomAccess(au) {
			r.lastKey = time.Now()
		}
		if !r.started {
			if !h264.IsRandomAccess(au) {
				continue
			}
			r.started = true
		}
		pts := dur(r.clock[i].pts(smp.PacketTimestamp, time.Now(), r.t0))
		units = append(units, &core.Unit{Track: i, PTS: pts, DTS: pts, AU: au})
	}
	r.mu.Unlock()
	r.publish(units)
	return last
}

func (r *republisher) publish(units []*core.Unit) {
	if r.stream == nil {
		return
	}
	for _, u := range units {
		if err := r.stream.WriteUnit(r.pub, u); err != nil {
			r.stream.DropPublisher(r.pub, err.Error())
			return
		}
	}
}

// lastKeyframe is when the last keyframe went out (zero before the first).
func (r *republisher) lastKeyframe() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastKey
}

// sinceKeyframe is how long ago the last keyframe went out (since the start before the first).
func (r *republisher) sinceKeyframe() time.Duration {
	if k := r.lastKeyframe(); !k.IsZero() {
		return time.Since(k)
	}
	return time.Since(r.t0) // set once, before any reader
}

// writeAudio pushes one Opus RTP packet (one Opus packet per RTP packet).
func (r *republisher) writeAudio(i int, pkt *rtp.Packet) {
	r.mu.Lock()
	c := r.clock[i]
	if c == nil || r.stopped || len(pkt.Payload) == 0 || r.builder[i] != nil {
		r.mu.Unlock()
		return
	}
	pts := c.pts(pkt.Timestamp, time.Now(), r.t0)
	started := r.started
	r.mu.Unlock()
	if started {
		r.publish([]*core.Unit{{Track: i, PTS: dur(pts), DTS: dur(pts), AU: [][]byte{append([]byte(nil), pkt.Payload...)}}})
	}
}

// stop ends the republishing.
func (r *republisher) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}
