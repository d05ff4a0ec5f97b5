package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Instance is this edge process's name (keycheck.Instance, set by main), sent on every answer.
var Instance string

// RequireCredential refuses every request but GET /healthz (which says only "ok") unless it
// carries `Authorization: Bearer <secret>` (LIVE_EDGE_SECRET, EDGE-CONTRACT.md "Credential"):
// 401 unauthorized otherwise. An empty secret refuses everything, so a misconfigured edge is
// closed, not open.
func RequireCredential(secret string, next http.Handler) http.Handler {
	want := []byte("Bearer " + secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if secret == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vidhost-edge"`)
			Error(w, http.StatusUnauthorized, "unauthorized", "the edge's API takes the service's credential (LIVE_EDGE_SECRET)")
			return
		}
		if Instance != "" {
			w.Header().Set("X-Edge-Instance", Instance)
		}
		next.ServeHTTP(w, r)
	})
}
