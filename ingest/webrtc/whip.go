package webrtc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pion/rtcp"
	pion "github.com/pion/webrtc/v4"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

// publisher is one WHIP session: a peer connection, its republisher and its core stream.
type publisher struct {
	s      *Server
	id     string
	key    string
	pc     *pion.PeerConnection
	stream *core.Stream // nil when the key check gave no live stream id
	pub    *core.Publisher

	mu        sync.Mutex
	closed    bool
	done      chan struct{}
	videoSSRC uint32
	lastPLI   time.Time
	tracks    []*pion.TrackRemote
	republish *republisher
	connected chan struct{}
	connOnce  sync.Once
}

var statusOfRefusal = map[string]int{
	"unknown": http.StatusUnauthorized, "bad_key": http.StatusUnauthorized,
	"disabled": http.StatusForbidden, "busy": http.StatusConflict, "plan_limit": http.StatusTooManyRequests,
}

func (s *Server) handleWHIP(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if !keycheck.IsStreamKey(key) {
		httpapi.Error(w, http.StatusUnauthorized, "bad_key", "not a stream key")
		return
	}
	offer, ok := readOffer(w, r)
	if !ok {
		return
	}
	if err := checkOffer(offer, true); err != nil {
		oe := err.(*offerError)
		httpapi.Error(w, http.StatusBadRequest, oe.code, oe.message)
		return
	}
	offer = s.screenCandidates(offer)
	// One publisher per key at this edge, and a bound on publishers at once.
	s.mu.Lock()
	switch {
	case s.publishers[key] != nil:
		s.mu.Unlock()
		httpapi.Error(w, http.StatusConflict, "busy", "the stream already has a publisher")
		return
	case len(s.publishers) >= s.cfg.WHIPMaxSessions:
		s.mu.Unlock()
		httpapi.Error(w, http.StatusServiceUnavailable, "edge_full", "the edge serves as many WHIP publishers as it may")
		return
	}
	p := &publisher{s: s, id: newID(), key: key, done: make(chan struct{}), connected: make(chan struct{})}
	s.publishers[key] = p
	s.mu.Unlock()
	admitted := false
	defer func() {
		if !admitted {
			s.mu.Lock()
			delete(s.publishers, key)
			s.mu.Unlock()
		}
	}()

	ctx, cancel := context.WithTimeout(r.Context(), 6*time.Second)
	a, err := s.check.Check(ctx, key, "whip")
	cancel()
	if err != nil {
		var refused *keycheck.Refused
		if errors.As(err, &refused) {
			status := statusOfRefusal[refused.Code]
			if status == 0 {
				status = http.StatusForbidden
			}
			code := refused.Code
			if code == "" {
				code = "refused"
			}
			logf("whip %s: refused: %s", short(key), refused.Reason)
			httpapi.Error(w, status, code, refused.Reason)
			return
		}
		logf("whip %s: %v", short(key), err)
		httpapi.Error(w, http.StatusServiceUnavailable, "key_check_unavailable", "the stream key could not be checked; try again")
		return
	}

	answer, err := p.start(offer, a.LiveStreamID)
	if err != nil {
		var oe *offerError
		if errors.As(err, &oe) {
			httpapi.Error(w, http.StatusBadRequest, oe.code, oe.message)
		} else {
			logf("whip %s: %v", short(key), err)
			httpapi.Error(w, http.StatusBadRequest, "bad_sdp", err.Error())
		}
		return
	}
	if !s.addSession(p.id, p) {
		p.close("edge stopping")
		httpapi.Error(w, http.StatusServiceUnavailable, "edge_stopping", "the edge is stopping")
		return
	}
	admitted = true
	if p.isClosed() { // ended (ICE failed at once) before it was listed: close() did not see it
		s.dropSession(p.id)
	}
	logf("whip %s: session %s (live stream %q)", short(key), p.id, a.LiveStreamID)
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/whip/"+key+"/"+p.id)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(answer))
}

// start negotiates the peer connection and arms the ICE timeout; it returns the answer.
func (p *publisher) start(offer, liveStreamID string) (string, error) {
	pc, err := p.s.api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return "", err
	}
	p.pc = pc
	fail := func(err error) (string, error) {
		_ = pc.Close()
		return "", err
	}
	pc.OnTrack(p.onTrack)
	pc.OnConnectionStateChange(func(st pion.PeerConnectionState) {
		switch st {
		case pion.PeerConnectionStateConnected:
			p.connOnce.Do(func() { close(p.connected) })
		case pion.PeerConnectionStateFailed, pion.PeerConnectionStateClosed:
			go p.close("connection " + st.String())
		}
	})
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer}); err != nil {
		return fail(&offerError{"bad_sdp", "the offer was not accepted: " + err.Error()})
	}
	var recvVideo bool
	for _, t := range pc.GetTransceivers() {
		if t.Kind() == pion.RTPCodecTypeVideo {
			recvVideo = true
		}
	}
	if !recvVideo {
		return fail(&offerError{"no_video", "no video section to receive"})
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(&offerError{"unsupported_codec", "no codec in the offer can be received (H.264 and Opus are): " + err.Error()})
	}
	if !strings.Contains(ans.SDP, "H264") {
		return fail(&offerError{"unsupported_codec", "no H.264 profile in the offer can be received"})
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return fail(err)
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
	}
	if liveStreamID != "" {
		p.stream = p.s.reg.Acquire(liveStreamID)
	}
	p.s.wg.Add(1)
	go func() {
		defer p.s.wg.Done()
		p.run()
	}()
	return pc.LocalDescription().SDP, nil
}

// run waits for ICE (else frees the key), then the tracks, then republishes until the end.
func (p *publisher) run() {
	select {
	case <-p.connected:
	case <-p.done:
		return
	case <-time.After(p.s.cfg.ICETimeout):
		p.close("ICE did not complete in " + p.s.cfg.ICETimeout.String())
		return
	}
	// The offer's sections are known: wait (briefly) for a first packet on each before
	// describing the MPEG-TS to ffmpeg.
	want := 0
	for _, t := range p.pc.GetTransceivers() {
		if t.Receiver() != nil && t.Direction() != pion.RTPTransceiverDirectionInactive {
			want++
		}
	}
	deadline := time.After(3 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.tracks)
		p.mu.Unlock()
		if n >= want {
			break
		}
		select {
		case <-p.done:
			return
		case <-deadline:
		case <-time.After(50 * time.Millisecond):
			continue
		}
		break
	}
	p.mu.Lock()
	tracks := append([]*pion.TrackRemote(nil), p.tracks...)
	p.mu.Unlock()
	var ct []core.Track
	hasVideo := false
	for _, t := range tracks {
		kind, codec, ch := "audio", "opus", int(t.Codec().Channels)
		if t.Kind() == pion.RTPCodecTypeVideo {
			kind, codec, ch, hasVideo = "video", "h264", 0, true
		}
		ct = append(ct, core.Track{Kind: kind, Codec: codec, Fmtp: t.Codec().SDPFmtpLine, Channels: ch})
	}
	if !hasVideo {
		p.close("no video arrived")
		return
	}
	rp := newRepublisher(tracks)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		rp.stop()
		return
	}
	p.republish = rp
	p.pub = &core.Publisher{Protocol: "whip", Tracks: ct, RequestKeyframe: p.requestKeyframe, Close: func() { go p.close("dropped by the edge") }}
	rp.stream, rp.pub = p.stream, p.pub
	p.mu.Unlock()
	if p.stream != nil {
		p.stream.Publish(p.pub)
	}
	p.requestKeyframe() // the republisher starts on a keyframe
	for i, t := range tracks {
		p.s.wg.Add(1)
		go func() {
			defer p.s.wg.Done()
			p.readTrack(i, t, rp)
		}()
	}
	// Browsers' encoders send a keyframe only when asked: ask whenever none came for 1 s, so the
	// republished feed has a GOP of about 1 s (the media server's GOP cache, the live session's
	// probe, HLS segments and late WHEP joiners all need keyframes).
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
			if rp.sinceKeyframe() >= maxGOP {
				p.requestKeyframe()
			}
		}
	}
}

// maxGOP is the longest a publisher goes without a keyframe before the edge asks for one.
const maxGOP = time.Second

func (p *publisher) onTrack(t *pion.TrackRemote, _ *pion.RTPReceiver) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.Kind() == pion.RTPCodecTypeVideo {
		if !strings.EqualFold(t.Codec().MimeType, pion.MimeTypeH264) {
			return
		}
		p.videoSSRC = uint32(t.SSRC())
	} else if !strings.EqualFold(t.Codec().MimeType, pion.MimeTypeOpus) {
		return
	}
	p.tracks = append(p.tracks, t)
}

// readTrack reads one track until the session ends: to the republisher and the WHEP viewers.
func (p *publisher) readTrack(i int, t *pion.TrackRemote, rp *republisher) {
	isVideo := t.Kind() == pion.RTPCodecTypeVideo
	window, start, bytes := p.s.cfg.RateWindow, time.Now(), int64(0)
	for {
		pkt, _, err := t.ReadRTP()
		if err != nil {
			return
		}
		n := len(pkt.Payload) + 12
		bytes += int64(n)
		if el := time.Since(start); el >= window {
			if bps := bytes * 8 * int64(time.Second) / int64(el); bps > p.s.cfg.MaxBitsPerSecond {
				if p.stream != nil && p.pub != nil {
					p.stream.DropPublisher(p.pub, fmt.Sprintf("input out of bounds: %d Mb/s is over %d Mb/s", (bps+500_000)/1_000_000, p.s.cfg.MaxBitsPerSecond/1_000_000))
				}
				p.close("input over the bitrate bound")
				return
			}
			start, bytes = time.Now(), 0
		}
		// Header extensions are the publisher's own (ids negotiated with it): not for viewers.
		pkt.Header.Extension, pkt.Header.Extensions, pkt.Header.ExtensionProfile = false, nil, 0
		if p.stream != nil {
			p.stream.RecordBytes(n)
			p.stream.WritePacket(i, pkt)
		}
		var au [][]byte
		if isVideo {
			au = rp.writeVideo(i, pkt)
		} else {
			rp.writeAudio(i, pkt)
		}
		if au != nil && p.stream != nil {
			p.stream.RecordVideoFrame(au)
		}
	}
}

// requestKeyframe sends a PLI to the publisher, unless one is already outstanding (sent < 500 ms
// ago with no keyframe since). A PLI answered already does not hold back the next: a WHEP viewer
// who joins just after a keyframe went by would otherwise wait a whole GOP for its first picture.
func (p *publisher) requestKeyframe() {
	p.mu.Lock()
	var lastKey time.Time
	if p.republish != nil {
		lastKey = p.republish.lastKeyframe()
	}
	if p.closed || p.videoSSRC == 0 || !pliDue(time.Now(), p.lastPLI, lastKey) {
		p.mu.Unlock()
		return
	}
	p.lastPLI = time.Now()
	ssrc := p.videoSSRC
	p.mu.Unlock()
	_ = p.pc.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: ssrc}})
}

// pliOutstanding is how long an unanswered PLI holds back the next (a publisher that ignores PLIs
// gets two a second, not one per viewer or per lost packet).
const pliOutstanding = 500 * time.Millisecond

// pliDue: no PLI yet, the last one is older than pliOutstanding, or a keyframe came after it.
func pliDue(now, lastPLI, lastKey time.Time) bool {
	return lastPLI.IsZero() || now.Sub(lastPLI) >= pliOutstanding || lastKey.After(lastPLI)
}

func (p *publisher) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *publisher) close(why string) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	rp, pub := p.republish, p.pub
	close(p.done)
	p.mu.Unlock()
	logf("whip %s: session %s ended: %s", short(p.key), p.id, why)
	_ = p.pc.Close()
	if rp != nil {
		rp.stop()
	}
	if p.stream != nil {
		if pub != nil {
			for _, r := range p.stream.Unpublish(pub) {
				if v, ok := r.(*viewer); ok {
					go v.close("the publisher left")
				}
			}
		}
		p.s.reg.Release(p.stream.ID)
	}
	p.s.mu.Lock()
	if p.s.publishers[p.key] == p {
		delete(p.s.publishers, p.key)
	}
	delete(p.s.sessions, p.id)
	p.s.mu.Unlock()
}

func short(key string) string {
	if len(key) > 9 {
		return key[:9] + "…"
	}
	return key
}
