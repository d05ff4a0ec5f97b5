// srt-gateway: SRT ingest for vidhost's live streams (SPEC §17, docs/live.md).
//
// An encoder calls srt://host:LIVE_SRT_PORT with its stream key as the streamid (the plain key,
// or the access-control form "#!::r=<key>,m=publish"). During the handshake the gateway asks the
// media server whether the key may publish (POST http://127.0.0.1:LIVE_SRT_CHECK_PORT/check):
// an unknown or disabled key, a second publisher or a plan at its limit is rejected before any
// media is accepted. An admitted caller's MPEG-TS is remuxed (no re-encode) by ffmpeg onto the
// media server's RTMP port under the `srt` application, so everything after ingest is shared
// with RTMP encoders.
package main

import (
	"log"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("srt-gateway: ")
	cfg, err := configFromEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	gw, err := listen(cfg)
	if err != nil {
		log.Fatalf("listen on %s: %v", cfg.addr, err)
	}
	log.Printf("listening on srt://%s (check %s, forward %s/srt/<key>)", cfg.addr, cfg.checkURL, cfg.rtmpBase)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- gw.serve() }()
	select {
	case <-stop:
		gw.close()
		<-done
		log.Printf("stopped")
	case err := <-done:
		log.Fatalf("serve: %v", err)
	}
}
