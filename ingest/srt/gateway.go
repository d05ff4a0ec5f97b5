// Package srt is SRT ingest (SPEC §17; docs/live.md "How a broadcast flows"), on
// github.com/datarhei/gosrt: an encoder calls srt://host:LIVE_SRT_PORT with its stream key as
// the streamid. During the handshake the server asks the media server whether the key may
// publish; a refused caller is rejected before it sends media. An admitted caller's MPEG-TS is
// demuxed (meter.go) and its units published into the stream core, where the feed, WHEP and the
// other readers take them: no ffmpeg, no second server.
package srt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	srt "github.com/datarhei/gosrt"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

// Server is the SRT listener and its callers.
type Server struct {
	cfg   config.Config
	ln    srt.Listener
	check *keycheck.Client
	reg   *core.Registry // nil: no stream health
	wg    sync.WaitGroup

	mu         sync.Mutex
	publishing map[string]bool // stream keys with a caller here (checked, being accepted or forwarding)
}

// Listen binds cfg.SRTAddr (UDP).
// A caller's stream is measured in reg (GET /streams) when the key check names its live stream.
func Listen(cfg config.Config, check *keycheck.Client, reg *core.Registry) (*Server, error) {
	c := srt.DefaultConfig()
	ln, err := srt.Listen("srt", cfg.SRTAddr, c)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, ln: ln, check: check, reg: reg, publishing: map[string]bool{}}, nil
}

// Close stops listening and ends every caller's session.
func (g *Server) Close() {
	g.ln.Close() // closes every connection, which ends their forwarders
	g.wg.Wait()
}

// Serve accepts callers until Close.
func (g *Server) Serve() error {
	for {
		req, err := g.ln.Accept2()
		if err != nil {
			if errors.Is(err, srt.ErrListenerClosed) {
				return nil
			}
			return err
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.handle(req)
		}()
	}
}

// reserve claims a stream key for one caller of this gateway (false: within the limits, it is taken).
func (g *Server) reserve(key string) (bool, srt.RejectionReason) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.publishing[key] {
		return false, srt.REJX_CONFLICT
	}
	if len(g.publishing) >= g.cfg.SRTMaxConns {
		return false, srt.REJX_OVERLOAD
	}
	g.publishing[key] = true
	return true, 0
}

func (g *Server) release(key string) {
	g.mu.Lock()
	delete(g.publishing, key)
	g.mu.Unlock()
}

// handle decides at the handshake: a caller that may not publish is rejected before it sends media.
func (g *Server) handle(req srt.ConnRequest) {
	peer := req.RemoteAddr().String()
	key, err := streamKey(req.StreamId())
	if err != nil {
		log.Printf("%s: rejected: %v", peer, err)
		if errors.Is(err, errNotPublish) {
			req.Reject(srt.REJX_BAD_MODE)
		} else {
			req.Reject(srt.REJX_BAD_REQUEST)
		}
		return
	}
	if req.Version() != 5 || req.IsEncrypted() {
		// A version 4 caller has no streamid; a passphrase is not one vidhost hands out.
		log.Printf("%s: rejected: handshake v%d, encrypted %v", peer, req.Version(), req.IsEncrypted())
		req.Reject(srt.REJ_UNSECURE)
		return
	}
	if ok, why := g.reserve(key); !ok {
		log.Printf("%s: rejected: %v", peer, why)
		req.Reject(why)
		return
	}
	defer g.release(key)
	liveStreamID, why, reason := g.admit(key)
	if reason != 0 {
		log.Printf("%s: rejected: %s", peer, why)
		req.Reject(reason)
		return
	}
	conn, err := req.Accept()
	if err != nil {
		log.Printf("%s: accept: %v", peer, err)
		return
	}
	defer conn.Close()
	log.Printf("%s: publishing (socket %d)", peer, conn.SocketId())
	var w io.Writer = io.Discard
	if g.reg != nil && liveStreamID != "" {
		m := newMeter(g.reg, liveStreamID, func() { conn.Close() })
		defer m.close()
		w = m
		why = g.copyBounded(conn, w, m)
	} else {
		why = g.copyBounded(conn, w, nil)
	}
	log.Printf("%s: publish ended: %s", peer, why)
}

// admit asks the media server whether the key may publish now (lib/live/key-check.ts).
func (g *Server) admit(key string) (string, string, srt.RejectionReason) {
	a, err := g.check.Check(context.Background(), key, "srt")
	if err == nil {
		return a.LiveStreamID, "", 0
	}
	var refused *keycheck.Refused
	if errors.As(err, &refused) {
		return "", refused.Reason, rejection(refused.Code)
	}
	return "", err.Error(), srt.REJX_DOWN
}

// rejection maps the media server's refusal to the SRT access-control code an encoder shows.
func rejection(code string) srt.RejectionReason {
	switch code {
	case "unknown", "bad_key":
		return srt.REJX_UNAUTHORIZED
	case "disabled":
		return srt.REJX_FORBIDDEN
	case "busy":
		return srt.REJX_CONFLICT
	case "plan_limit":
		return srt.REJX_OVERLOAD
	}
	return srt.REJX_FORBIDDEN
}

// copyBounded copies the caller's data to w, dropping a caller whose input averages more than
// maxBitsPerSecond over rateWindow (10 s; SPEC §17's input bounds); m, when not nil, is told why
// (the disconnected hook's reason).
func (g *Server) copyBounded(conn srt.Conn, w io.Writer, m *meter) string {
	buf := make([]byte, 64*1024)
	bound := core.RateBound{Max: g.cfg.MaxBitsPerSecond, Window: g.cfg.RateWindow}
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			if why := bound.Add(n, time.Now()); why != "" {
				why = "input out of bounds: " + why
				if m != nil {
					m.drop(why)
				}
				conn.Close()
				return why
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				conn.Close()
				return fmt.Sprintf("feed: %v", werr)
			}
		}
		if err != nil {
			if m != nil && m.dropped() != "" {
				return m.dropped()
			}
			if errors.Is(err, io.EOF) {
				return "caller disconnected"
			}
			return fmt.Sprintf("caller: %v", err)
		}
	}
}
