package httpapi

import (
	"net/http"

	"github.com/vidhost/vidhost/ingest/core"
)

// StreamsRoute is GET /streams/{id}: the stream's health as the edge sees it (WHIP and SRT
// publishers, LL-HLS muxers); 404 when it sees none of them.
func StreamsRoute(reg *core.Registry) Route {
	return Route{Pattern: "GET /streams/{id}", Handler: func(w http.ResponseWriter, r *http.Request) {
		s := reg.Get(r.PathValue("id"))
		if s == nil {
			Error(w, http.StatusNotFound, "stream_not_found", "the edge sees no publisher or LL-HLS for this stream")
			return
		}
		h, ok := s.Health()
		if !ok {
			Error(w, http.StatusNotFound, "stream_not_found", "the edge sees no publisher or LL-HLS for this stream")
			return
		}
		JSON(w, http.StatusOK, h)
	}}
}
