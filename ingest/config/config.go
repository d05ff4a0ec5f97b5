// Package config reads the edge's settings from the same environment as the rest of vidhost
// (lib/config/live.ts names and defaults; EDGE-CONTRACT.md).
package config

import (
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
	// CheckURL is the media server's key check, http://127.0.0.1:LIVE_SRT_CHECK_PORT/check.
	CheckURL string
	// MediaURL is LIVE_MEDIA_INTERNAL_URL: where SRT and WHIP feeds are republished (apps srt, whip).
	MediaURL string
	// FFmpeg is FFMPEG_PATH.
	FFmpeg string
	// SRTMaxConns bounds the SRT callers handled at once (LIVE_SRT_MAX_CONNECTIONS).
	SRTMaxConns int
	// MaxBitsPerSecond drops a publisher whose input averages more over RateWindow (SPEC §17: ≤ 20 Mb/s declared).
	MaxBitsPerSecond int64
	RateWindow       time.Duration

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
	// ICETimeout frees a WHIP/WHEP session whose peer never completes ICE.
	ICETimeout time.Duration
	// ICEDisconnected and ICEFailed: a peer silent this long is "disconnected", then this much
	// longer "failed" (its session ends).
	ICEDisconnected, ICEFailed time.Duration
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
		MediaURL:         strings.TrimRight(get("LIVE_MEDIA_INTERNAL_URL", "rtmp://127.0.0.1:1935"), "/"),
		FFmpeg:           get("FFMPEG_PATH", "ffmpeg"),
		SRTMaxConns:      positive("LIVE_SRT_MAX_CONNECTIONS", "64"),
		MaxBitsPerSecond: 30_000_000,
		RateWindow:       10 * time.Second,
		HTTPAddr:         net.JoinHostPort(get("LIVE_EDGE_HTTP_HOST", "127.0.0.1"), port("LIVE_EDGE_HTTP_PORT", "8889")),
		WebRTCAddr:       net.JoinHostPort(ingestHost, port("LIVE_WEBRTC_UDP_PORT", "8189")),
		WHEPMaxViewers:   positive("LIVE_WHEP_MAX_VIEWERS", "200"),
		WHIPMaxSessions:  positive("LIVE_WHIP_MAX_SESSIONS", "64"),
		ICETimeout:       10 * time.Second,
		ICEDisconnected:  3 * time.Second,
		ICEFailed:        5 * time.Second,
	}
	for _, a := range strings.Split(getenv("LIVE_WEBRTC_ANNOUNCE"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.Announce = append(c.Announce, a)
		}
	}
	return c, firstErr
}
