package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// config comes from the same environment as the rest of vidhost (lib/config.ts names and defaults).
type config struct {
	addr     string // LIVE_INGEST_HOST:LIVE_SRT_PORT
	checkURL string // http://127.0.0.1:LIVE_SRT_CHECK_PORT/check
	rtmpBase string // LIVE_MEDIA_INTERNAL_URL
	ffmpeg   string // FFMPEG_PATH
	// maxConns bounds the callers handled at once (LIVE_SRT_MAX_CONNECTIONS).
	maxConns int
	// maxBitsPerSecond drops a caller whose input averages more over rateWindow (SPEC §17: ≤ 20 Mb/s declared).
	maxBitsPerSecond int64
	rateWindow       time.Duration
}

func configFromEnv(getenv func(string) string) (config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	port := func(name, def string) (string, error) {
		v := get(name, def)
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 65535 {
			return "", fmt.Errorf("%s=%q is not a port", name, v)
		}
		return v, nil
	}
	srtPort, err := port("LIVE_SRT_PORT", "8890")
	if err != nil {
		return config{}, err
	}
	checkPort, err := port("LIVE_SRT_CHECK_PORT", "8891")
	if err != nil {
		return config{}, err
	}
	maxConns, err := strconv.Atoi(get("LIVE_SRT_MAX_CONNECTIONS", "64"))
	if err != nil || maxConns < 1 {
		return config{}, fmt.Errorf("LIVE_SRT_MAX_CONNECTIONS must be a positive integer")
	}
	return config{
		addr:             net.JoinHostPort(get("LIVE_INGEST_HOST", "127.0.0.1"), srtPort),
		checkURL:         "http://127.0.0.1:" + checkPort + "/check",
		rtmpBase:         strings.TrimRight(get("LIVE_MEDIA_INTERNAL_URL", "rtmp://127.0.0.1:1935"), "/"),
		ffmpeg:           get("FFMPEG_PATH", "ffmpeg"),
		maxConns:         maxConns,
		maxBitsPerSecond: 30_000_000,
		rateWindow:       10 * time.Second,
	}, nil
}
