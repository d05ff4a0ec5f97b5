// Package hls is the LL-HLS packager (SPEC §22; EDGE-CONTRACT.md) on bluenviron/gohlslib v2.2.3:
// the live session's ffmpeg PUTs each rendition's MPEG-TS (H.264 + AAC) to
// /hls/{live_stream_id}/{rendition}/ingest, read with mediacommon's MPEG-TS reader into one
// gohlslib muxer per (stream, rendition) (fMP4 Low-Latency variant: 200 ms parts, segments of
// at least 1 s cut on keyframes); the muxer serves the playlists, the blocking reload
// (_HLS_msn/_HLS_part), segments and parts under /hls/{live_stream_id}/{rendition}/.
package hls

import (
	"log"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/bluenviron/gohlslib/v2"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// nameRE bounds live stream ids and rendition names (path segments).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Options are the packager's settings.
type Options struct {
	// Grace keeps a rendition's muxer serving after its ingest stops (a restarted ffmpeg takes it
	// over); past it the muxer is dropped.
	Grace time.Duration
	// MaxRenditions bounds the muxers at once (every stream).
	MaxRenditions int
	// PartDuration and SegmentDuration are gohlslib's minimums (200 ms, 1 s).
	PartDuration, SegmentDuration time.Duration
	// Segments kept in each media playlist (32: a sliding window of at least 30 s, SPEC §17).
	Segments int
}

// Server holds the muxers.
type Server struct {
	reg  *core.Registry
	opts Options

	mu         sync.Mutex
	renditions map[string]*rendition // by "ls/rendition"
	closed     bool
}

// rendition is one (stream, rendition) muxer and its current ingest.
type rendition struct {
	ls, name string
	muxer    *gohlslib.Muxer
	guard    *guard
	stream   *core.Stream
	ingest   *ingest // the PUT feeding it (nil between ingests)
	timer    *time.Timer
	dropped  bool

	mvMu      sync.Mutex
	mvPending *fetch // a wait for the muxer's multivariant playlist under way
}

// New is a packager with opts' zero values defaulted.
func New(reg *core.Registry, opts Options) *Server {
	if opts.Grace == 0 {
		opts.Grace = 30 * time.Second
	}
	if opts.MaxRenditions == 0 {
		opts.MaxRenditions = 256
	}
	if opts.PartDuration == 0 {
		opts.PartDuration = 200 * time.Millisecond
	}
	if opts.SegmentDuration == 0 {
		opts.SegmentDuration = time.Second
	}
	if opts.Segments < 7 { // gohlslib's minimum for Low-Latency HLS
		opts.Segments = 32
	}
	return &Server{reg: reg, opts: opts, renditions: map[string]*rendition{}}
}

// Routes are the packager's endpoints of the internal HTTP API.
func (s *Server) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "PUT /hls/{ls}/{rendition}/ingest", Handler: s.handleIngest},
		{Pattern: "POST /hls/{ls}/{rendition}/ingest", Handler: s.handleIngest},
		{Pattern: "GET /hls/{ls}/index.m3u8", Handler: s.handleStreamPlaylist},
		{Pattern: "GET /hls/{ls}/{rendition}/{file}", Handler: s.handleGet},
		{Pattern: "DELETE /hls/{ls}", Handler: s.handleDelete},
	}
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	ls, name := r.PathValue("ls"), r.PathValue("rendition")
	s.mu.Lock()
	rd := s.renditions[ls+"/"+name]
	s.mu.Unlock()
	if rd == nil {
		httpapi.Error(w, http.StatusNotFound, "not_found", "no LL-HLS for this stream and rendition")
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	rd.muxer.Handle(sw, r)
	switch {
	case sw.status == 0:
		// gohlslib writes nothing for a file it does not have (an expired segment, a typo).
		httpapi.Error(w, http.StatusNotFound, "not_found", "no such playlist, segment or part")
	case sw.status == http.StatusInternalServerError && sw.n == 0:
		// The muxer closed while the request waited (the stream ended).
		sw.ResponseWriter.WriteHeader(http.StatusNotFound)
	}
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	ls := r.PathValue("ls")
	s.mu.Lock()
	var drop []*rendition
	for _, rd := range s.renditions {
		if rd.ls == ls {
			drop = append(drop, rd)
		}
	}
	s.mu.Unlock()
	for _, rd := range drop {
		s.drop(rd, "DELETE")
	}
	httpapi.JSON(w, http.StatusOK, map[string]int{"dropped": len(drop)})
}

// drop closes a rendition's muxer and its ingest (if any).
func (s *Server) drop(rd *rendition, why string) {
	s.mu.Lock()
	if rd.dropped {
		s.mu.Unlock()
		return
	}
	rd.dropped = true
	if s.renditions[rd.ls+"/"+rd.name] == rd {
		delete(s.renditions, rd.ls+"/"+rd.name)
	}
	if rd.timer != nil {
		rd.timer.Stop()
	}
	in := rd.ingest
	s.mu.Unlock()
	if in != nil {
		in.cancel()
	}
	rd.guard.close(rd.muxer)
	rd.stream.SetLLHLS(-1)
	s.reg.Release(rd.ls)
	log.Printf("hls: %s/%s dropped (%s)", rd.ls, rd.name, why)
}

// Renditions counts the muxers (tests: nothing leaks).
func (s *Server) Renditions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.renditions)
}

// Close drops every muxer.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*rendition, 0, len(s.renditions))
	for _, rd := range s.renditions {
		all = append(all, rd)
	}
	s.mu.Unlock()
	for _, rd := range all {
		s.drop(rd, "edge stopping")
	}
}

// statusWriter records what the muxer wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	n      int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	if code == http.StatusInternalServerError {
		return // rewritten by handleGet
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(b)
	return w.ResponseWriter.Write(b)
}
