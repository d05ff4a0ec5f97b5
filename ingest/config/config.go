// Package config reads the edge's settings from the same environment as the rest of vidhost
// (lib/config/live.ts names and defaults; EDGE-CONTRACT.md).
package config

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of vidhost-edge.
type Config struct {
	// SRTAddr is LIVE_INGEST_HOST:LIVE_SRT_PORT (UDP).
	SRTAddr string
	// CheckURL is the service's key check, http://127.0.0.1:LIVE_SRT_CHECK_PORT/check; its hooks
	// (/connected, /disconnected) are next to it.
	CheckURL string
	// SRTMaxConns bounds the SRT callers handled at once (LIVE_SRT_MAX_CONNECTIONS).
	SRTMaxConns int
	// MaxBitsPerSecond drops a publisher whose input averages more over RateWindow: the one input
	// bound of every protocol (SPEC §17: ≤ 20 Mb/s), LIVE_MAX_INPUT_BITRATE.
	MaxBitsPerSecond int64
	RateWindow       time.Duration

	// RTMPAddr is LIVE_INGEST_HOST:LIVE_RTMP_PORT (TCP, 1935), RTMP ingest: the edge is the only one.
	RTMPAddr string

	// Secret is the credential every request to the internal HTTP API but /healthz carries
	// (`Authorization: Bearer <Secret>`): LIVE_EDGE_SECRET, else derived from UPLOAD_SIGNING_SECRET
	// as lib/config/live.ts does (EdgeSecret).
	Secret string
	// HTTPAddr is LIVE_EDGE_HTTP_HOST:LIVE_EDGE_HTTP_PORT, the internal HTTP API (TCP).
	HTTPAddr string
	// WebRTCAddr is LIVE_INGEST_HOST:LIVE_WEBRTC_UDP_PORT, the one UDP port of every WebRTC session.
	WebRTCAddr string
	// Announce are LIVE_WEBRTC_ANNOUNCE's addresses, announced as host candidates (NAT 1:1); empty: local ones.
	Announce []string
	// WHEPMaxViewers bounds the WHEP sessions of one stream (LIVE_WHEP_MAX_VIEWERS).
	WHEPMaxViewers int
	// WHIPMaxSessions bounds the WHIP publishers handled at once (LIVE_WHIP_MAX_SESSIONS).
	WHIPMaxSessions int
	// ICETimeout frees a WHIP/WHEP session whose peer never completes ICE
	// (LIVE_WEBRTC_ICE_TIMEOUT_SECONDS, 10): a WHEP offer holds a viewer slot no longer.
	ICETimeout time.Duration
	// AllowPrivateCandidates (LIVE_WEBRTC_ALLOW_PRIVATE_CANDIDATES=true): the edge also sends
	// connectivity checks to an offer's loopback, link-local and private (RFC 1918, ULA)
	// candidates. Off by default: they are dropped from the offer, so an offer cannot aim the
	// edge's STUN at the machine's own or its network's ports; a peer there still connects, by
	// its own checks to the edge (answered as peer-reflexive).
	AllowPrivateCandidates bool
	// WHEPOfferBurst and WHEPOffersPerSecond are the token bucket of WHEP offers per client
	// address (LIVE_WHEP_OFFER_BURST, 10; LIVE_WHEP_OFFERS_PER_SECOND, 2): past it, 429.
	WHEPOfferBurst      int
	WHEPOffersPerSecond float64
	// ICEDisconnected and ICEFailed: a peer silent this long is "disconnected", then this much
	// longer "failed" (its session ends).
	ICEDisconnected, ICEFailed time.Duration
}

// devSecret is lib/config/env.ts DEV_SECRET, the development default of UPLOAD_SIGNING_SECRET.
const devSecret = "dev-only-insecure-secret-change-me"

// EdgeSecret is the edge API's credential: explicit (LIVE_EDGE_SECRET) when set, else
// hex(HMAC-SHA256(UPLOAD_SIGNING_SECRET or the development default, "vidhost-live-edge")) — the
// same derivation as lib/config/live.ts, so a deployment that sets only the upload secret (compose,
// the Helm chart) has a credential on both sides without sending the upload secret itself.
func EdgeSecret(explicit, uploadSecret string) string {
	if s := strings.TrimSpace(explicit); s != "" {
		return s
	}
	if strings.TrimSpace(uploadSecret) == "" {
		uploadSecret = devSecret
	}
	m := hmac.New(sha256.New, []byte(uploadSecret))
	m.Write([]byte("vidhost-live-edge"))
	return hex.EncodeToString(m.Sum(nil))
}

// FromEnv reads Config from getenv (os.Getenv), with the defaults of EDGE-CONTRACT.md.
func FromEnv(getenv func(string) string) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	var firstErr error
	port := func(name, def string) string {
		v := get(name, def)
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 65535 {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s=%q is not a port", name, v)
			}
		}
		return v
	}
	positive := func(name, def string) int {
		v := get(name, def)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s=%q must be a positive integer", name, v)
			}
		}
		return n
	}
	ingestHost := get("LIVE_INGEST_HOST", "127.0.0.1")
	c := Config{
		SRTAddr:          net.JoinHostPort(ingestHost, port("LIVE_SRT_PORT", "8890")),
		CheckURL:         "http://127.0.0.1:" + port("LIVE_SRT_CHECK_PORT", "8891") + "/check",
		RTMPAddr:         net.JoinHostPort(ingestHost, port("LIVE_RTMP_PORT", "1935")),
		SRTMaxConns:      positive("LIVE_SRT_MAX_CONNECTIONS", "64"),
		MaxBitsPerSecond: int64(positive("LIVE_MAX_INPUT_BITRATE", "20000000")),
		RateWindow:       10 * time.Second,
		Secret:           EdgeSecret(getenv("LIVE_EDGE_SECRET"), getenv("UPLOAD_SIGNING_SECRET")),
		HTTPAddr:         net.JoinHostPort(get("LIVE_EDGE_HTTP_HOST", "127.0.0.1"), port("LIVE_EDGE_HTTP_PORT", "8889")),
		WebRTCAddr:       net.JoinHostPort(ingestHost, port("LIVE_WEBRTC_UDP_PORT", "8189")),
		WHEPMaxViewers:   positive("LIVE_WHEP_MAX_VIEWERS", "200"),
		WHIPMaxSessions:  positive("LIVE_WHIP_MAX_SESSIONS", "64"),
		ICETimeout:       time.Duration(positive("LIVE_WEBRTC_ICE_TIMEOUT_SECONDS", "10")) * time.Second,
		WHEPOfferBurst:   positive("LIVE_WHEP_OFFER_BURST", "10"),
		ICEDisconnected:  3 * time.Second,
		ICEFailed:        5 * time.Second,
	}
	c.AllowPrivateCandidates = truthy(getenv("LIVE_WEBRTC_ALLOW_PRIVATE_CANDIDATES"))
	rate := get("LIVE_WHEP_OFFERS_PER_SECOND", "2")
	if r, err := strconv.ParseFloat(rate, 64); err != nil || r <= 0 || r > 1e6 {
		if firstErr == nil {
			firstErr = fmt.Errorf("LIVE_WHEP_OFFERS_PER_SECOND=%q must be a positive number", rate)
		}
	} else {
		c.WHEPOffersPerSecond = r
	}
	for _, a := range strings.Split(getenv("LIVE_WEBRTC_ANNOUNCE"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.Announce = append(c.Announce, a)
		}
	}
	return c, firstErr
}

// truthy: "true", "1", "yes" or "on" (any case).
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}
