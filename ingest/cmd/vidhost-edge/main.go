// vidhost-edge: the live edge of vidhost (SPEC §17, §22; docs/live.md; EDGE-CONTRACT.md) — the
// only ingest, one binary with a package per protocol over one stream core (ingest/core): RTMP
// (ingest/rtmp), SRT (ingest/srt), WHIP ingest and WHEP playback (ingest/webrtc), the live
// worker's feed (ingest/feed), the LL-HLS packager (ingest/hls), and the internal HTTP API
// (ingest/httpapi) on LIVE_EDGE_HTTP_PORT. The service hears of publishers through its hooks.
package main

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/feed"
	"github.com/vidhost/vidhost/ingest/hls"
	"github.com/vidhost/vidhost/ingest/httpapi"
	"github.com/vidhost/vidhost/ingest/keycheck"
	"github.com/vidhost/vidhost/ingest/rtmp"
	"github.com/vidhost/vidhost/ingest/srt"
	"github.com/vidhost/vidhost/ingest/webrtc"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("vidhost-edge: ")
	// No stream key in full in any log line (SPEC §22): ffmpeg's stderr names rtmp://…/whip/<key>.
	log.SetOutput(core.RedactingWriter(os.Stderr))
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	check := keycheck.New(cfg.CheckURL)
	reg := core.NewRegistry()
	reg.SetHooks(check)
	httpapi.Instance = keycheck.Instance

	srtServer, err := srt.Listen(cfg, check, reg)
	if err != nil {
		log.Fatalf("listen on srt://%s: %v", cfg.SRTAddr, err)
	}
	rtc, err := webrtc.Listen(cfg, check, reg)
	if err != nil {
		log.Fatalf("listen on udp://%s (WebRTC): %v", cfg.WebRTCAddr, err)
	}
	rtmpServer, err := rtmp.Listen(cfg, check, reg)
	if err != nil {
		log.Fatalf("listen on rtmp://%s: %v", cfg.RTMPAddr, err)
	}
	httpLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		log.Fatalf("listen on http://%s: %v", cfg.HTTPAddr, err)
	}
	packager := hls.New(reg, hls.Options{})
	routes := append(append(append(rtc.Routes(), packager.Routes()...), feed.Routes(reg)...), httpapi.StreamsRoute(reg), httpapi.DropRoute(reg))
	httpServer := &http.Server{Handler: httpapi.RequireCredential(cfg.Secret, httpapi.Handler(routes...)), ReadHeaderTimeout: 10 * time.Second}

	done := make(chan error, 3)
	go func() { done <- srtServer.Serve() }()
	go func() { done <- rtmpServer.Serve() }()
	go func() { done <- httpServer.Serve(httpLn) }()
	log.Printf("listening on rtmp://%s, srt://%s and udp://%s (WebRTC) (check and hooks %s), http://%s", cfg.RTMPAddr, cfg.SRTAddr, cfg.WebRTCAddr, cfg.CheckURL, cfg.HTTPAddr)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
		// The sessions first: that ends the long requests (LL-HLS ingests, blocking reloads).
		srtServer.Close()
		rtmpServer.Close()
		rtc.Close()
		packager.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = httpServer.Shutdown(ctx)
		cancel()
		log.Printf("stopped")
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		log.Fatalf("serve: %v", err)
	}
}
