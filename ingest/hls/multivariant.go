package hls

import (
	"bytes"
	"net/http"
	"sort"
	"time"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/vidhost/vidhost/ingest/httpapi"
)

// handleStreamPlaylist is GET /hls/{ls}/index.m3u8: one multivariant playlist over the stream's
// renditions, merged (with gohlslib's playlist package) from each rendition muxer's own: every
// variant's URI is prefixed with its rendition's folder, and one rendition's audio (the first,
// by name, that has any) is the audio group of every variant.
func (s *Server) handleStreamPlaylist(w http.ResponseWriter, r *http.Request) {
	ls := r.PathValue("ls")
	s.mu.Lock()
	var rds []*rendition
	for _, rd := range s.renditions {
		if rd.ls == ls {
			rds = append(rds, rd)
		}
	}
	s.mu.Unlock()
	if len(rds) == 0 {
		httpapi.Error(w, http.StatusNotFound, "not_found", "no LL-HLS for this stream")
		return
	}
	sort.Slice(rds, func(i, j int) bool { return rds[i].name < rds[j].name })
	out := &playlist.Multivariant{Version: 9, IndependentSegments: true}
	audioGroup := ""
	for _, rd := range rds {
		raw := rd.multivariant(5 * time.Second)
		if raw == nil {
			continue
		}
		var m playlist.Multivariant
		if err := m.Unmarshal(raw); err != nil {
			continue
		}
		if audioGroup == "" {
			for _, rend := range m.Renditions {
				if rend.Type == playlist.MultivariantRenditionTypeAudio && rend.URI != nil {
					uri := rd.name + "/" + *rend.URI
					rend.URI = &uri
					audioGroup = rend.GroupID
					out.Renditions = append(out.Renditions, rend)
				}
			}
		}
		for _, v := range m.Variants {
			v.URI = rd.name + "/" + v.URI
			out.Variants = append(out.Variants, v)
		}
	}
	if len(out.Variants) == 0 {
		httpapi.Error(w, http.StatusNotFound, "not_ready", "no rendition has a segment yet")
		return
	}
	for _, v := range out.Variants {
		v.Audio = audioGroup
	}
	sort.SliceStable(out.Variants, func(i, j int) bool { return out.Variants[i].Bandwidth > out.Variants[j].Bandwidth })
	buf, err := out.Marshal()
	if err != nil {
		httpapi.Error(w, http.StatusServiceUnavailable, "not_ready", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf)
}

// multivariant is the rendition muxer's own multivariant playlist, or nil when it has none
// within wait (no segment yet). gohlslib blocks until the first segment: at most one such wait
// per rendition runs at a time, and it ends with the muxer.
func (rd *rendition) multivariant(wait time.Duration) []byte {
	rd.mvMu.Lock()
	f := rd.mvPending
	if f == nil {
		f = &fetch{done: make(chan struct{})}
		rd.mvPending = f
		go func() {
			rec := &recorder{header: http.Header{}}
			req, _ := http.NewRequest(http.MethodGet, "/index.m3u8", nil)
			rd.muxer.Handle(rec, req)
			if rec.status == http.StatusOK {
				f.body = rec.body.Bytes()
			}
			rd.mvMu.Lock()
			rd.mvPending = nil
			rd.mvMu.Unlock()
			close(f.done)
		}()
	}
	rd.mvMu.Unlock()
	select {
	case <-f.done:
		return f.body
	case <-time.After(wait):
		return nil
	}
}

// fetch is one wait for a muxer's multivariant playlist, shared by the requests that want it.
type fetch struct {
	done chan struct{}
	body []byte
}

// recorder is an in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
