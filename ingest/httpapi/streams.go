package httpapi

import (
	"net/http"
	"strings"

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
		// Viewers of the stream's WebRTC rendition are its WHEP viewers too, counted and listed
		// as the source's are: from ICE connected on (a view starts there, lib/analytics/whep.ts).
		if rs := reg.Get(core.RenditionID(r.PathValue("id"))); rs != nil {
			rh, _ := rs.Health()
			h.WHEPViewers += rh.WHEPViewers
			h.WHEPSessions = append(h.WHEPSessions, rh.WHEPSessions...)
			h.WebRTCRendition = rs.Protocol() != ""
		}
		JSON(w, http.StatusOK, h)
	}}
}

// DropRoute is DELETE /streams/{id}/publisher?reason=…: the service ends the broadcast's
// publisher (complete, disable, key reset, delete — lib/live/control.ts), whatever protocol it
// arrived by; the disconnected hook then carries the reason. 200 {"dropped":true}, or 404
// no_publisher.
func DropRoute(reg *core.Registry) Route {
	return Route{Pattern: "DELETE /streams/{id}/publisher", Handler: func(w http.ResponseWriter, r *http.Request) {
		reason := strings.TrimSpace(r.URL.Query().Get("reason"))
		if reason == "" {
			reason = "dropped by the service"
		}
		if len(reason) > 200 {
			reason = reason[:200]
		}
		s := reg.Get(r.PathValue("id"))
		if s == nil || !s.Drop(reason) {
			Error(w, http.StatusNotFound, "no_publisher", "the edge has no publisher on this stream")
			return
		}
		JSON(w, http.StatusOK, map[string]bool{"dropped": true})
	}}
}
