package hls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"github.com/bluenviron/gohlslib/v2/pkg/codecs"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// maxProbeBytes bounds what is read before the MPEG-TS's tracks are known.
const maxProbeBytes = 4 << 20

// ingest is one PUT body being packaged.
type ingest struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// handleIngest reads a rendition's MPEG-TS until its body ends (ffmpeg stopped) or the rendition
// is dropped. A PUT while another feeds the rendition is refused (409); a PUT after one ended
// starts a fresh muxer (a restarted ffmpeg's timestamps start over).
func (s *Server) handleIngest(w http.ResponseWriter, r *http.Request) {
	ls, name := r.PathValue("ls"), r.PathValue("rendition")
	if !nameRE.MatchString(ls) || !nameRE.MatchString(name) {
		httpapi.Error(w, http.StatusBadRequest, "bad_name", "the stream id and rendition must be 1-64 of [A-Za-z0-9_-]")
		return
	}
	s.mu.Lock()
	if old := s.renditions[ls+"/"+name]; old != nil && old.ingest != nil {
		s.mu.Unlock()
		httpapi.Error(w, http.StatusConflict, "ingest_busy", "another ingest feeds this rendition")
		return
	}
	if s.closed || len(s.renditions) >= s.opts.MaxRenditions && s.renditions[ls+"/"+name] == nil {
		s.mu.Unlock()
		httpapi.Error(w, http.StatusServiceUnavailable, "packager_full", "the packager serves as many renditions as it may")
		return
	}
	s.mu.Unlock()

	// The tracks first (bounded), then the muxer.
	probe := &core.ProbeReader{R: r.Body, N: maxProbeBytes}
	reader := &mpegts.Reader{R: probe}
	if err := reader.Initialize(); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_mpegts", fmt.Sprintf("the body is not MPEG-TS with a program (%v)", err))
		return
	}
	muxer := &gohlslib.Muxer{
		Variant:            gohlslib.MuxerVariantLowLatency,
		SegmentCount:       s.opts.Segments,
		SegmentMinDuration: s.opts.SegmentDuration,
		PartMinDuration:    s.opts.PartDuration,
		SegmentMaxSize:     20 << 20,
		OnEncodeError:      func(err error) { log.Printf("hls: %s/%s: %v", ls, name, err) },
	}
	td := &mpegts.TimeDecoder{}
	td.Initialize()
	g := &guard{}
	var mu sync.Mutex // the reader's callbacks run in Read; the decoder is shared by the tracks
	for _, t := range reader.Tracks() {
		c := codecs.FromMPEGTS(t.Codec)
		if c == nil {
			continue
		}
		switch tc := c.(type) {
		case *codecs.H264:
			ht := &gohlslib.Track{Codec: tc, ClockRate: 90000}
			muxer.Tracks = append(muxer.Tracks, ht)
			gap := &gapSkipper{where: ls + "/" + name}
			reader.OnDataH264(t, func(pts, _ int64, au [][]byte) error {
				mu.Lock()
				p := td.Decode(pts)
				mu.Unlock()
				return g.write(func() error {
					return gap.write(au, func() error { return muxer.WriteH264(ht, time.Now(), p, au) })
				})
			})
		case *codecs.MPEG4Audio:
			rate := int64(tc.Config.SampleRate)
			if rate <= 0 {
				continue
			}
			ht := &gohlslib.Track{Codec: tc, ClockRate: int(rate)}
			muxer.Tracks = append(muxer.Tracks, ht)
			reader.OnDataMPEG4Audio(t, func(pts int64, aus [][]byte) error {
				mu.Lock()
				p := td.Decode(pts)
				mu.Unlock()
				return g.write(func() error { return muxer.WriteMPEG4Audio(ht, time.Now(), p*rate/90000, aus) })
			})
		}
	}
	if len(muxer.Tracks) == 0 {
		httpapi.Error(w, http.StatusBadRequest, "no_usable_tracks", "the MPEG-TS has no H.264 or AAC track")
		return
	}
	if err := muxer.Start(); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_tracks", err.Error())
		return
	}
	reader.OnDecodeError(func(err error) { log.Printf("hls: %s/%s: decode: %v", ls, name, err) })

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	in := &ingest{ctx: ctx, cancel: cancel}
	rd, err := s.attach(ls, name, muxer, g, in)
	if err != nil {
		g.close(muxer)
		httpapi.Error(w, http.StatusConflict, "ingest_busy", err.Error())
		return
	}
	log.Printf("hls: %s/%s: ingest started (%d tracks)", ls, name, len(muxer.Tracks))
	probe.N = -1 // unbounded from now on: a live feed
	why := "ingest ended"
	for {
		if ctx.Err() != nil {
			why = "dropped"
			break
		}
		if err := reader.Read(); err != nil {
			if errors.Is(err, errDropped) {
				why = "dropped"
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				why = err.Error()
			}
			break
		}
	}
	s.detach(rd, in)
	log.Printf("hls: %s/%s: %s", ls, name, why)
	w.WriteHeader(http.StatusNoContent)
}

// attach makes muxer the rendition's (replacing an idle one).
func (s *Server) attach(ls, name string, muxer *gohlslib.Muxer, g *guard, in *ingest) (*rendition, error) {
	s.mu.Lock()
	old := s.renditions[ls+"/"+name]
	if old != nil && old.ingest != nil {
		s.mu.Unlock()
		return nil, errors.New("another ingest feeds this rendition")
	}
	s.mu.Unlock()
	if old != nil {
		s.drop(old, "replaced by a new ingest")
	}
	stream := s.reg.Acquire(ls)
	stream.SetLLHLS(1)
	rd := &rendition{ls: ls, name: name, muxer: muxer, guard: g, stream: stream, ingest: in}
	s.mu.Lock()
	if cur := s.renditions[ls+"/"+name]; cur != nil {
		s.mu.Unlock()
		stream.SetLLHLS(-1)
		s.reg.Release(ls)
		return nil, errors.New("another ingest feeds this rendition")
	}
	s.renditions[ls+"/"+name] = rd
	s.mu.Unlock()
	return rd, nil
}

// detach: the ingest ended; the muxer keeps serving for the grace period.
func (s *Server) detach(rd *rendition, in *ingest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rd.dropped || rd.ingest != in {
		return
	}
	rd.ingest = nil
	rd.timer = time.AfterFunc(s.opts.Grace, func() {
		s.mu.Lock()
		idle := rd.ingest == nil
		s.mu.Unlock()
		if idle {
			s.drop(rd, "no ingest for the grace period")
		}
	})
}

// errDropped ends an ingest whose rendition was dropped (at its next write).
var errDropped = errors.New("the rendition was dropped")

// guard serializes the muxer's writes with its Close (gohlslib wants them apart).
type guard struct {
	mu     sync.Mutex
	closed bool
}

func (g *guard) write(f func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errDropped
	}
	return f()
}

func (g *guard) close(m *gohlslib.Muxer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		m.Close()
	}
}

// gapSkipper keeps a rendition alive through frames lost upstream (a WebRTC publisher's packet
// loss, the ladder's FIFO dropping packets while a PUT stalls). With pic_order_cnt_type 0 (browsers'
// H.264, x264 with B-frames) each lost frame is a gap in picture order, which the muxer's DTS
// extractor reads as reordering and refuses past 10 frames. Ending the ingest there ended the
// rendition for its viewers; instead, an access unit the muxer refuses is skipped with every one
// after it until the next keyframe (a decoder could not use them anyway: they reference what was
// lost). A keyframe the muxer refuses still ends the ingest.
type gapSkipper struct {
	where    string
	skipping bool
	skipped  int
	why      error
}

func (g *gapSkipper) write(au [][]byte, write func() error) error {
	key := h264.IsRandomAccess(au)
	if g.skipping && !key {
		g.skipped++
		return nil
	}
	err := write()
	switch {
	case err == nil:
		if g.skipping {
			log.Printf("hls: %s: %d frames skipped to the next keyframe (%v)", g.where, g.skipped, g.why)
			g.skipping, g.skipped, g.why = false, 0, nil
		}
		return nil
	case key:
		return err
	default:
		g.skipping, g.skipped, g.why = true, 1, err
		return nil
	}
}
