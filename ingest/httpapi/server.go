// Package httpapi is the edge's internal HTTP API (EDGE-CONTRACT.md): every route but /healthz
// takes the service's credential (RequireCredential, LIVE_EDGE_SECRET); bound to
// LIVE_EDGE_HTTP_HOST (loopback by default); only the vidhost API and worker reach it.
package httpapi

import (
	"encoding/json"
	"net/http"
)

// Route is a pattern (Go 1.22 ServeMux syntax, e.g. "POST /whip/{key}") and its handler.
type Route struct {
	Pattern string
	Handler http.HandlerFunc
}

// Handler serves /healthz and the protocol packages' routes.
func Handler(routes ...Route) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	for _, r := range routes {
		mux.HandleFunc(r.Pattern, r.Handler)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		Error(w, http.StatusNotFound, "not_found", "no such endpoint")
	})
	return mux
}

// Error writes the contract's error body {"error":{"code","message"}}.
func Error(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
