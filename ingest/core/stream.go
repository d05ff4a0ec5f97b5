// Package core is the live edge's stream core (STYLE.md "The live edge"): one Stream per live
// stream with its publisher's tracks, its readers and what is measured of its input. The protocol
// packages (srt, webrtc, hls) publish into it and read from it; it knows no protocol's details
// beyond the RTP packet as the unit readers receive.
package core

import (
	"errors"
	"sync"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/rtp"
)

// ErrTooManyReaders is AddReader over the stream's bound.
var ErrTooManyReaders = errors.New("too many readers")

// ErrNoPublisher is AddReader on a stream nobody publishes RTP to.
var ErrNoPublisher = errors.New("no publisher")

// Track is one of the publisher's media tracks.
type Track struct {
	Kind  string // "video" | "audio"
	Codec string // "h264", "opus", "aac", …
	// Fmtp is the codec's SDP format parameters as the publisher negotiated them (WHIP), so
	// readers can offer the same (an H.264 profile-level-id); empty when unknown.
	Fmtp string
}

// Reader receives the publisher's RTP packets (track index into Stream.Tracks()). WritePacket
// must not block: a slow reader drops, never the publisher.
type Reader interface {
	WritePacket(track int, pkt *rtp.Packet)
}

// Publisher is what a stream's source offers its readers besides packets.
type Publisher struct {
	Protocol string // "srt" | "whip"
	Tracks   []Track
	// RequestKeyframe asks the source for a keyframe (WHIP: a PLI); nil when it cannot.
	RequestKeyframe func()
}

// Stream is one live stream at the edge.
type Stream struct {
	ID string

	mu      sync.Mutex
	pub     *Publisher
	readers map[Reader]struct{}
	fanout  []Reader // a snapshot of readers, replaced (never changed) on add/remove
	llhls   int      // LL-HLS renditions being packaged
	stats   stats
}

// Publish makes p the stream's source (replacing none: callers admit one publisher per key).
func (s *Stream) Publish(p *Publisher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pub = p
	s.stats = stats{}
}

// Unpublish removes p (if it is still the source) and drops every reader.
func (s *Stream) Unpublish(p *Publisher) []Reader {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != p {
		return nil
	}
	s.pub = nil
	var dropped []Reader
	for r := range s.readers {
		dropped = append(dropped, r)
	}
	s.readers = map[Reader]struct{}{}
	s.fanout = nil
	return dropped
}

// SetTracks sets p's tracks once they are known (if p is still the source).
func (s *Stream) SetTracks(p *Publisher, tracks []Track) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == p {
		p.Tracks = tracks
	}
}

// Tracks are the publisher's tracks (nil without one).
func (s *Stream) Tracks() []Track {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil {
		return nil
	}
	return s.pub.Tracks
}

// Protocol is the publisher's protocol ("" without one).
func (s *Stream) Protocol() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil {
		return ""
	}
	return s.pub.Protocol
}

// AddReader registers r, bounded by max readers; it fails without an RTP publisher.
func (s *Stream) AddReader(r Reader, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil || s.pub.Protocol != "whip" {
		return ErrNoPublisher
	}
	if len(s.readers) >= max {
		return ErrTooManyReaders
	}
	if s.readers == nil {
		s.readers = map[Reader]struct{}{}
	}
	s.readers[r] = struct{}{}
	s.fanout = append(append(make([]Reader, 0, len(s.fanout)+1), s.fanout...), r)
	return nil
}

// RemoveReader unregisters r.
func (s *Stream) RemoveReader(r Reader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.readers[r]; !ok {
		return
	}
	delete(s.readers, r)
	next := make([]Reader, 0, len(s.fanout))
	for _, x := range s.fanout {
		if x != r {
			next = append(next, x)
		}
	}
	s.fanout = next
}

// Readers counts the readers.
func (s *Stream) Readers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.readers)
}

// RequestKeyframe asks the publisher for a keyframe (a reader joined or lost packets).
func (s *Stream) RequestKeyframe() {
	s.mu.Lock()
	var f func()
	if s.pub != nil {
		f = s.pub.RequestKeyframe
	}
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// WritePacket hands the publisher's packet on track to every reader.
func (s *Stream) WritePacket(track int, pkt *rtp.Packet) {
	s.mu.Lock()
	readers := s.fanout // immutable snapshot: no copy per packet
	s.mu.Unlock()
	for _, r := range readers {
		r.WritePacket(track, pkt)
	}
}

// SetLLHLS counts an LL-HLS rendition packaged for the stream (+1 on start, -1 on end).
func (s *Stream) SetLLHLS(delta int) {
	s.mu.Lock()
	s.llhls += delta
	s.mu.Unlock()
}

// RecordBytes counts n bytes of the publisher's input (the bitrate).
func (s *Stream) RecordBytes(n int) {
	s.mu.Lock()
	s.stats.bytes(time.Now(), n)
	s.mu.Unlock()
}

// RecordVideoFrame counts one access unit of the video track (Annex-B NAL units without start codes).
func (s *Stream) RecordVideoFrame(au [][]byte) {
	now := time.Now()
	key := false
	var sps []byte
	for _, nalu := range au {
		if len(nalu) == 0 {
			continue
		}
		switch h264.NALUType(nalu[0] & 0x1f) {
		case h264.NALUTypeIDR:
			key = true
		case h264.NALUTypeSPS:
			sps = nalu
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.frame(now, key)
	if sps != nil && string(sps) != string(s.stats.sps) {
		var p h264.SPS
		if p.Unmarshal(sps) == nil {
			s.stats.sps = append([]byte(nil), sps...)
			s.stats.width, s.stats.height, s.stats.spsFPS = p.Width(), p.Height(), p.FPS()
		}
	}
}

// Health is GET /streams/{id} (EDGE-CONTRACT.md).
type Health struct {
	Protocol          string     `json:"protocol"`
	Video             *VideoInfo `json:"video"`
	Audio             *AudioInfo `json:"audio"`
	BitrateKbps       int        `json:"bitrate_kbps"`
	KeyframeIntervalS *float64   `json:"keyframe_interval_s"`
	WHEPViewers       int        `json:"whep_viewers"`
	LLHLS             bool       `json:"llhls"`
}

// VideoInfo is the video track as measured (fps from the frames seen, else the SPS's timing).
type VideoInfo struct {
	Codec  string   `json:"codec"`
	Width  int      `json:"width"`
	Height int      `json:"height"`
	FPS    *float64 `json:"fps"`
}

// AudioInfo is the audio track.
type AudioInfo struct {
	Codec string `json:"codec"`
}

// Health reports the stream; ok is false when the edge sees neither a publisher nor LL-HLS.
func (s *Stream) Health() (Health, bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Health{LLHLS: s.llhls > 0, WHEPViewers: len(s.readers)}
	if s.pub == nil {
		return h, h.LLHLS
	}
	h.Protocol = s.pub.Protocol
	h.BitrateKbps = s.stats.kbps(now)
	h.KeyframeIntervalS = s.stats.keyframeInterval()
	for _, t := range s.pub.Tracks {
		switch {
		case t.Kind == "video" && h.Video == nil:
			h.Video = &VideoInfo{Codec: t.Codec, Width: s.stats.width, Height: s.stats.height, FPS: s.stats.fps(now)}
		case t.Kind == "audio" && h.Audio == nil:
			h.Audio = &AudioInfo{Codec: t.Codec}
		}
	}
	return h, true
}
