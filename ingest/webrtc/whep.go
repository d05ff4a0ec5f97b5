package webrtc

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// viewer is one WHEP session: the publisher's tracks written to a peer connection.
type viewer struct {
	s      *Server
	id     string
	stream *core.Stream
	pc     *pion.PeerConnection
	tracks []*pion.TrackLocalStaticRTP // by the publisher's track index (nil: not sent)

	mu        sync.Mutex
	closed    bool
	done      chan struct{}
	connected chan struct{}
	connOnce  sync.Once
}

func (s *Server) handleWHEP(w http.ResponseWriter, r *http.Request) {
	// Before any work: an address past its offers' bucket is told when to come back.
	if ok, wait := s.offers.take(clientOf(r), time.Now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		httpapi.Error(w, http.StatusTooManyRequests, "too_many_offers", "too many WHEP offers from this address; retry after Retry-After seconds")
		return
	}
	offer, ok := readOffer(w, r)
	if !ok {
		return
	}
	if err := checkOffer(offer, false); err != nil {
		oe := err.(*offerError)
		httpapi.Error(w, http.StatusBadRequest, oe.code, oe.message)
		return
	}
	offer = s.screenCandidates(offer)
	id, err := s.whepSource(r.PathValue("stream"), r.URL.Query().Get("rendition"))
	if err != nil { // rendition.go: the picture must come from a rendition not yet started
		w.Header().Set("Retry-After", "1")
		httpapi.Error(w, http.StatusServiceUnavailable, "rendition_pending", err.Error())
		return
	}
	stream := s.reg.Acquire(id)
	v := &viewer{s: s, id: newID(), stream: stream, done: make(chan struct{}), connected: make(chan struct{})}
	answer, status, err := v.start(offer)
	if err != nil {
		s.reg.Release(id)
		code := map[int]string{http.StatusNotFound: "no_webrtc_source", http.StatusTooManyRequests: "too_many_viewers"}[status]
		if code == "" {
			code = "bad_sdp"
		}
		var oe *offerError
		if errors.As(err, &oe) {
			code = oe.code
		}
		httpapi.Error(w, status, code, err.Error())
		return
	}
	if !s.addSession(v.id, v) {
		v.close("edge stopping")
		httpapi.Error(w, http.StatusServiceUnavailable, "edge_stopping", "the edge is stopping")
		return
	}
	v.mu.Lock()
	closed := v.closed
	v.mu.Unlock()
	if closed { // ended before it was listed: close() did not see it
		s.dropSession(v.id)
	}
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/whep/"+r.PathValue("stream")+"/"+v.id)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(answer))
}

// start negotiates and registers the viewer with the stream (404 no WebRTC source, 429 full).
func (v *viewer) start(offer string) (string, int, error) {
	// Any publisher with H.264 video (WHIP, RTMP, SRT: all publish into the core); audio only
	// when it is Opus (an RTMP/SRT source's AAC is not sent: WebRTC has no AAC).
	src := v.stream.Tracks()
	if !webrtcVideo(src) {
		return "", http.StatusNotFound, errors.New("the stream has no live WebRTC source")
	}
	pc, err := v.s.api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return "", http.StatusInternalServerError, err
	}
	v.pc = pc
	fail := func(status int, err error) (string, int, error) {
		// Never started: the caller releases the stream; close() must not.
		v.mu.Lock()
		v.closed = true
		close(v.done)
		v.mu.Unlock()
		_ = pc.Close()
		return "", status, err
	}
	v.tracks = make([]*pion.TrackLocalStaticRTP, len(src))
	for i, t := range src {
		if !carried(t) {
			continue
		}
		var c pion.RTPCodecCapability
		// The publisher's own format parameters (its H.264 profile), so the viewer's decoder is
		// told what it gets.
		if t.Kind == "video" {
			c = pion.RTPCodecCapability{MimeType: pion.MimeTypeH264, ClockRate: 90000, SDPFmtpLine: t.Fmtp}
			if c.SDPFmtpLine == "" {
				c.SDPFmtpLine = "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"
			}
		} else {
			c = pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: t.Fmtp}
		}
		local, err := pion.NewTrackLocalStaticRTP(c, t.Kind, "vidhost-"+v.stream.ID)
		if err != nil {
			return fail(http.StatusInternalServerError, err)
		}
		sender, err := pc.AddTrack(local)
		if err != nil {
			return fail(http.StatusInternalServerError, err)
		}
		v.tracks[i] = local
		v.s.wg.Add(1)
		go func() {
			defer v.s.wg.Done()
			v.readRTCP(sender)
		}()
	}
	pc.OnConnectionStateChange(func(st pion.PeerConnectionState) {
		switch st {
		case pion.PeerConnectionStateConnected:
			v.connOnce.Do(func() { close(v.connected) })
			v.stream.RequestKeyframe() // the viewer starts on a keyframe
		case pion.PeerConnectionStateFailed, pion.PeerConnectionStateClosed:
			go v.close("connection " + st.String())
		}
	})
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer}); err != nil {
		return fail(http.StatusBadRequest, &offerError{"bad_sdp", "the offer was not accepted: " + err.Error()})
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(http.StatusBadRequest, &offerError{"unsupported_codec", "the offer cannot receive H.264/Opus: " + err.Error()})
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return fail(http.StatusBadRequest, &offerError{"bad_sdp", err.Error()})
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
	}
	if err := v.stream.AddReader(v, v.s.cfg.WHEPMaxViewers); err != nil {
		if errors.Is(err, core.ErrTooManyReaders) {
			return fail(http.StatusTooManyRequests, errors.New("the stream has as many WebRTC viewers as it may"))
		}
		return fail(http.StatusNotFound, errors.New("the stream has no live WebRTC source"))
	}
	v.stream.RequestKeyframe()
	v.s.wg.Add(1)
	go func() {
		defer v.s.wg.Done()
		select {
		case <-v.connected:
		case <-v.done:
		case <-time.After(v.s.cfg.ICETimeout):
			v.close("ICE did not complete in " + v.s.cfg.ICETimeout.String())
		}
	}()
	return pc.LocalDescription().SDP, http.StatusCreated, nil
}

// Session is the viewer's session id and whether its ICE completed: the edge's stats count a
// viewer from then (GET /streams/{id} whep_viewers and whep_sessions), as the API's analytics do.
func (v *viewer) Session() (string, bool) {
	select {
	case <-v.connected:
		return v.id, true
	default:
		return v.id, false
	}
}

// carried: a track WebRTC viewers are given as is (H.264 video, Opus audio).
func carried(t core.Track) bool {
	return (t.Kind == "video" && t.Codec == "h264") || (t.Kind == "audio" && t.Codec == "opus")
}

func webrtcVideo(src []core.Track) bool {
	for _, t := range src {
		if t.Kind == "video" && t.Codec == "h264" {
			return true
		}
	}
	return false
}

// WritePacket is the stream core's fan-out: never blocks on the network (UDP writes).
func (v *viewer) WritePacket(track int, pkt *rtp.Packet) {
	if track < len(v.tracks) && v.tracks[track] != nil {
		_ = v.tracks[track].WriteRTP(pkt)
	}
}

// readRTCP drains the viewer's RTCP (the interceptors need it read) and forwards keyframe requests.
func (v *viewer) readRTCP(sender *pion.RTPSender) {
	for {
		pkts, _, err := sender.ReadRTCP()
		if err != nil {
			return
		}
		for _, p := range pkts {
			switch p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				v.stream.RequestKeyframe()
			}
		}
	}
}

func (v *viewer) close(why string) {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	v.closed = true
	close(v.done)
	v.mu.Unlock()
	v.stream.RemoveReader(v)
	_ = v.pc.Close()
	v.s.reg.Release(v.stream.ID)
	v.s.dropSession(v.id)
	_ = why
}
