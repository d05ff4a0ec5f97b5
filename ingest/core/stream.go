// Package core is the live edge's stream core (STYLE.md "The live edge"): one Stream per live
// stream with its publisher's tracks, its readers and what is measured of its input.
//
// The path: a publisher — rtmp (conn.go), srt (meter.go) or webrtc (whip.go) — is admitted by
// the key check and Publishes here (one per stream); RTMP and SRT hand in access units
// (WriteH264/WriteOpus, units.go: measured, packetized to RTP), WHIP its RTP as received
// (WritePacket). Readers — WHEP viewers (webrtc/whep.go) — AddReader and get every packet,
// never blocking the publisher. A source WebRTC viewers cannot be given as is (B-frames, AAC, a
// watermarked stream) has a second Stream, RenditionID, published by webrtc/rendition.go from the
// live worker's WebRTC rendition, which WHEP reads instead. The ladder's input (and so the
// recording) reads every protocol's units from here as a feed (feed.go, ingest/feed: GET /feed);
// LL-HLS comes back by PUT (hls). The service hears of publishers through the hooks (hooks.go)
// and drops them with Drop; the input bounds (bound.go, bounds.go) are checked on the way in. The core knows no protocol's details beyond
// the RTP packet as the unit readers receive.
package core

import (
	"errors"
	"sync"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
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
	// AAC is an AAC track's configuration (the feed's ADTS headers); Channels an Opus track's.
	AAC      *mpeg4audio.AudioSpecificConfig
	Channels int
	// SPS and PPS are an H.264 track's parameter sets from its configuration (RTMP's sequence
	// header), put before each keyframe that lacks them (WriteUnit).
	SPS, PPS []byte
}

// Reader receives the publisher's RTP packets (track index into Stream.Tracks()). WritePacket
// must not block: a slow reader drops, never the publisher.
type Reader interface {
	WritePacket(track int, pkt *rtp.Packet)
}

// SessionReader is a reader with a session that may not be connected yet (a WHEP viewer before
// ICE completes): Health counts it only once connected.
type SessionReader interface {
	Session() (id string, connected bool)
}

// Publisher is what a stream's source offers its readers besides packets.
type Publisher struct {
	Protocol string // "rtmp" | "srt" | "whip"
	Tracks   []Track
	// RequestKeyframe asks the source for a keyframe (WHIP: a PLI); nil when it cannot.
	RequestKeyframe func()
	// Close ends the source's connection (Drop: complete, disable, key reset, the bounds); the
	// protocol then Unpublishes as for any end. Nil: it cannot be dropped from here.
	Close func()
	// Session names this publishing session to the service (the connected/disconnected hooks);
	// made on Publish when empty.
	Session string

	endReason string // why it ended, when the edge ended it (Drop); guarded by the Stream's mu

	packetizers map[int]*packetizer // WriteH264's, by track (guarded by the Stream's mu)
	params      map[int][2][]byte   // the last H.264 SPS and PPS seen, by track (guarded by the Stream's mu)
}

// Stream is one live stream at the edge.
type Stream struct {
	ID    string
	hooks *hookQueue // the registry's: the service hears of publishers coming and going

	mu      sync.Mutex
	pub     *Publisher
	readers map[Reader]struct{}
	fanout  []Reader // a snapshot of readers, replaced (never changed) on add/remove
	llhls   int      // LL-HLS renditions being packaged
	stats   stats
	// reordered: the publisher's video has B-frames (WriteH264 saw pts ≠ dts).
	reordered bool
	// The feed (feed.go): its readers, and the units since the last video keyframe.
	subs   map[*Subscription]struct{}
	gop    []*Unit
	bounds unitBounds
}

// Publish makes p the stream's source (replacing none: callers admit one publisher per key).
func (s *Stream) Publish(p *Publisher) {
	s.mu.Lock()
	if p.Session == "" {
		p.Session = newSessionID()
	}
	s.pub = p
	s.stats = stats{}
	s.reordered = false
	s.gop, s.bounds = nil, unitBounds{}
	s.mu.Unlock()
	s.hooks.connected(s, p)
}

// TryPublish makes p the source unless the stream has one already (one publisher per stream:
// an RTMP encoder and a WHIP one on the same key at this edge).
func (s *Stream) TryPublish(p *Publisher) bool {
	s.mu.Lock()
	busy := s.pub != nil
	s.mu.Unlock()
	if busy {
		return false
	}
	s.Publish(p)
	return true
}

// Unpublish removes p (if it is still the source), ends the feed's readers and drops every
// RTP reader (returned, for the caller to close); the service hears that the publisher left.
func (s *Stream) Unpublish(p *Publisher) []Reader {
	s.mu.Lock()
	if s.pub != p {
		s.mu.Unlock()
		return nil
	}
	s.pub = nil
	var dropped []Reader
	for r := range s.readers {
		dropped = append(dropped, r)
	}
	s.readers = map[Reader]struct{}{}
	s.fanout = nil
	for sub := range s.subs {
		s.endSub(sub)
	}
	s.gop = nil
	reason := p.endReason
	s.mu.Unlock()
	if reason == "" {
		reason = "encoder disconnected"
	}
	s.hooks.disconnected(s, p, reason)
	return dropped
}

// Drop ends the current publisher with reason (the service's DELETE: complete, disable, key
// reset, delete; or the input bounds); false when there is none or it cannot be ended.
func (s *Stream) Drop(reason string) bool {
	s.mu.Lock()
	p := s.pub
	if p == nil || p.Close == nil {
		s.mu.Unlock()
		return false
	}
	if p.endReason == "" {
		p.endReason = reason
	}
	s.mu.Unlock()
	p.Close()
	return true
}

// DropPublisher is Drop for p only (a protocol that found p past the input bounds).
func (s *Stream) DropPublisher(p *Publisher, reason string) {
	s.mu.Lock()
	if p.endReason == "" {
		p.endReason = reason
	}
	s.mu.Unlock()
	if p.Close != nil {
		p.Close()
	}
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

// AddReader registers r, bounded by max readers; it fails without a publisher of H.264 video.
func (s *Stream) AddReader(r Reader, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasVideo() {
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

// hasVideo: a publisher with an H.264 track (what RTP readers are given). Callers hold mu.
func (s *Stream) hasVideo() bool {
	if s.pub == nil {
		return false
	}
	for _, t := range s.pub.Tracks {
		if t.Kind == "video" && t.Codec == "h264" {
			return true
		}
	}
	return false
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
	// WHEPViewers counts the readers that are connected (a WHEP session from ICE connected);
	// WHEPSessions are their session ids.
	WHEPViewers  int      `json:"whep_viewers"`
	WHEPSessions []string `json:"whep_sessions"`
	LLHLS        bool     `json:"llhls"`
	// WebRTCRendition: WHEP is served from the rendition the live worker makes for it (set by
	// the streams route from the RenditionID stream).
	WebRTCRendition bool `json:"webrtc_rendition"`
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
	h := Health{LLHLS: s.llhls > 0, WHEPSessions: []string{}}
	for r := range s.readers {
		if sr, ok := r.(SessionReader); ok {
			id, connected := sr.Session()
			if !connected {
				continue
			}
			h.WHEPSessions = append(h.WHEPSessions, id)
		}
		h.WHEPViewers++
	}
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
