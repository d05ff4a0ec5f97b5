// Package rtmp is RTMP ingest in the live edge (SPEC §22 "One live hub"), on the MediaMTX
// authors' github.com/bluenviron/gortmplib: an encoder publishes to rtmp://host:port/live/<key>.
// The key is checked (keycheck, app "rtmp") before the publish is accepted, so a refused encoder
// never gets to send media; an admitted one publishes into the stream core (ingest/core), where
// WHEP and the other readers take it. The input is bounded as SRT's is (config.MaxBitsPerSecond
// over config.RateWindow). Always served, on LIVE_RTMP_PORT (1935): the edge is the only ingest.
package rtmp

import (
	"errors"
	"log"
	"net"
	"sync"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

// Server is the RTMP listener and its publishers.
type Server struct {
	cfg   config.Config
	ln    net.Listener
	check *keycheck.Client
	reg   *core.Registry
	wg    sync.WaitGroup

	mu     sync.Mutex
	conns  map[*conn]struct{}
	keys   map[string]bool // stream keys with a publisher here (checked or publishing)
	closed bool
}

// Listen binds cfg.RTMPAddr (TCP).
func Listen(cfg config.Config, check *keycheck.Client, reg *core.Registry) (*Server, error) {
	ln, err := net.Listen("tcp", cfg.RTMPAddr)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, ln: ln, check: check, reg: reg, conns: map[*conn]struct{}{}, keys: map[string]bool{}}, nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts encoders until Close.
func (s *Server) Serve() error {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		c := &conn{s: s, nc: nc}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			why := c.run()
			log.Printf("rtmp %s: ended: %s", nc.RemoteAddr(), why)
			nc.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops listening and ends every publisher.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

// reserve claims a key for one publisher at this edge.
func (s *Server) reserve(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys[key] {
		return false
	}
	s.keys[key] = true
	return true
}

func (s *Server) release(key string) {
	s.mu.Lock()
	delete(s.keys, key)
	s.mu.Unlock()
}
