// Package webrtc is WHIP ingest (RFC 9725) and WHEP playback on pion/webrtc v4 (SPEC §22;
// EDGE-CONTRACT.md). Every session shares one UDP port (an ICE UDP mux on LIVE_WEBRTC_UDP_PORT);
// LIVE_WEBRTC_ANNOUNCE's addresses replace the local ones in host candidates (NAT 1:1).
//
// A WHIP publisher's key is checked like an SRT caller's (app "whip"); its H.264 is depacketized
// and written with its Opus as MPEG-TS into ffmpeg, which copies the video, encodes the audio to
// AAC and republishes onto the media server's RTMP port (`/whip/<key>`), so the rest of the
// pipeline is shared. Its RTP packets are also fanned out through the stream core to WHEP viewers.
package webrtc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	pion "github.com/pion/webrtc/v4"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

// maxSDPBytes bounds an offer's body; maxCandidates the ICE candidates an offer may carry.
const (
	maxSDPBytes   = 64 * 1024
	maxCandidates = 64
)

// Server holds the UDP port and every WHIP/WHEP session.
type Server struct {
	cfg   config.Config
	check *keycheck.Client
	reg   *core.Registry
	udp   net.PacketConn
	mux   ice.UDPMux
	api   *pion.API
	// offers bounds WHEP offers per client address.
	offers *offerLimiter

	mu         sync.Mutex
	publishers map[string]*publisher // by stream key (admitted or being checked)
	sessions   map[string]session    // by session id
	wg         sync.WaitGroup
	closed     bool
}

type session interface{ close(why string) }

// Listen binds cfg.WebRTCAddr (UDP) for every session.
func Listen(cfg config.Config, check *keycheck.Client, reg *core.Registry) (*Server, error) {
	udp, err := net.ListenPacket("udp4", cfg.WebRTCAddr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, check: check, reg: reg, udp: udp, publishers: map[string]*publisher{}, sessions: map[string]session{}, offers: newOfferLimiter(cfg.WHEPOfferBurst, cfg.WHEPOffersPerSecond)}
	s.mux = pion.NewICEUDPMux(nil, udp)
	se := pion.SettingEngine{}
	se.SetICEUDPMux(s.mux)
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	// A publisher that vanishes without DELETE (a closed tab, a dead encoder) holds its key until
	// ICE fails: about 8 s after its last packet (3 s to "disconnected", 5 more to "failed")
	// rather than pion's 30, so it can come back inside the stream's reconnect window.
	se.SetICETimeouts(cfg.ICEDisconnected, cfg.ICEFailed, time.Second)
	if host, _, _ := net.SplitHostPort(cfg.WebRTCAddr); net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback() {
		se.SetIncludeLoopbackCandidate(true)
	}
	if len(cfg.Announce) > 0 {
		se.SetNAT1To1IPs(cfg.Announce, pion.ICECandidateTypeHost)
	}
	m := &pion.MediaEngine{}
	if err := registerCodecs(m); err != nil {
		udp.Close()
		return nil, err
	}
	ir := &interceptor.Registry{}
	if err := pion.RegisterDefaultInterceptors(m, ir); err != nil {
		udp.Close()
		return nil, err
	}
	s.api = pion.NewAPI(pion.WithMediaEngine(m), pion.WithInterceptorRegistry(ir), pion.WithSettingEngine(se))
	return s, nil
}

// registerCodecs: H.264 (the profiles browsers and OBS offer) and Opus, nothing else.
func registerCodecs(m *pion.MediaEngine) error {
	fb := []pion.RTCPFeedback{{Type: "goog-remb"}, {Type: "ccm", Parameter: "fir"}, {Type: "nack"}, {Type: "nack", Parameter: "pli"}, {Type: "transport-cc"}}
	pt := pion.PayloadType(102)
	for _, fmtp := range []string{
		"level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
		"level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
		"level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f",
		"level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640032",
		"level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f",
		"level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f",
	} {
		if err := m.RegisterCodec(pion.RTPCodecParameters{RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypeH264, ClockRate: 90000, SDPFmtpLine: fmtp, RTCPFeedback: fb}, PayloadType: pt}, pion.RTPCodecTypeVideo); err != nil {
			return err
		}
		pt++
	}
	return m.RegisterCodec(pion.RTPCodecParameters{RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}, PayloadType: 111}, pion.RTPCodecTypeAudio)
}

// Routes are the WHIP/WHEP endpoints of the internal HTTP API.
func (s *Server) Routes() []httpapi.Route {
	notSupported := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", "POST, DELETE")
		httpapi.Error(w, http.StatusMethodNotAllowed, "trickle_ice_not_supported", "trickle ICE (PATCH) is not supported: send every candidate in the offer")
	}
	return []httpapi.Route{
		{Pattern: "POST /whip/{key}", Handler: s.handleWHIP},
		{Pattern: "DELETE /whip/{key}/{session}", Handler: s.handleDelete("whip")},
		{Pattern: "PATCH /whip/{key}/{session}", Handler: notSupported},
		{Pattern: "POST /whep/{stream}", Handler: s.handleWHEP},
		{Pattern: "DELETE /whep/{stream}/{session}", Handler: s.handleDelete("whep")},
		{Pattern: "PATCH /whep/{stream}/{session}", Handler: notSupported},
		{Pattern: "PUT /webrtc/{ls}/ingest", Handler: s.handleRenditionIngest},
	}
}

func (s *Server) handleDelete(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("session")
		s.mu.Lock()
		sess := s.sessions[id]
		ok := sess != nil
		switch p := sess.(type) {
		case *publisher:
			ok = kind == "whip" && p.key == r.PathValue("key")
		case *viewer:
			ok = kind == "whep" && (p.stream.ID == r.PathValue("stream") || p.stream.ID == core.RenditionID(r.PathValue("stream")))
		}
		s.mu.Unlock()
		if !ok {
			httpapi.Error(w, http.StatusNotFound, "session_not_found", "no such session")
			return
		}
		sess.close("ended by DELETE")
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) addSession(id string, sess session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.sessions[id] = sess
	return true
}

func (s *Server) dropSession(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

// Sessions counts the live sessions (tests: nothing leaks).
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Close ends every session and frees the UDP port.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	for _, sess := range all {
		sess.close("edge stopping")
	}
	s.wg.Wait()
	s.mux.Close()
	s.udp.Close()
}

// readOffer reads a bounded application/sdp body; it writes the error itself (false).
func readOffer(w http.ResponseWriter, r *http.Request) (string, bool) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/sdp") {
		httpapi.Error(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be an SDP offer (Content-Type: application/sdp)")
		return "", false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSDPBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpapi.Error(w, http.StatusBadRequest, "sdp_too_large", "the SDP offer is over 64 KB")
		} else {
			httpapi.Error(w, http.StatusBadRequest, "bad_sdp", "the SDP offer could not be read")
		}
		return "", false
	}
	return string(body), true
}

// screenCandidates drops the offer's loopback, link-local and private candidates unless
// LIVE_WEBRTC_ALLOW_PRIVATE_CANDIDATES is on (config.Config.AllowPrivateCandidates).
func (s *Server) screenCandidates(offer string) string {
	if s.cfg.AllowPrivateCandidates {
		return offer
	}
	out, _ := dropPrivateCandidates(offer)
	return out
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func logf(format string, args ...any) { log.Printf("webrtc: "+format, args...) }
