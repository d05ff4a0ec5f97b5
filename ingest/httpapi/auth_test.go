package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vidhost/vidhost/ingest/core"
)

func TestEveryRouteButHealthzTakesTheCredential(t *testing.T) {
	reg := core.NewRegistry()
	reg.Acquire("ls_1").SetLLHLS(1)
	h := httptest.NewServer(RequireCredential("s3cret-s3cret-s3cret", Handler(StreamsRoute(reg), Route{Pattern: "DELETE /whip/{key}/{id}", Handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }})))
	defer h.Close()
	do := func(method, path, auth string) int {
		req, _ := http.NewRequest(method, h.URL+path, strings.NewReader(""))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := do("GET", "/healthz", ""); c != 200 {
		t.Fatalf("healthz: %d", c)
	}
	for _, auth := range []string{"", "Bearer ", "Bearer wrong", "Basic czNjcmV0LXMzY3JldC1zM2NyZXQ=", "Bearer s3cret-s3cret-s3cre", "s3cret-s3cret-s3cret"} {
		for _, r := range [][2]string{{"GET", "/streams/ls_1"}, {"DELETE", "/whip/k/s"}, {"GET", "/nope"}, {"POST", "/healthz"}} {
			if c := do(r[0], r[1], auth); c != 401 {
				t.Errorf("%s %s with %q: %d, want 401", r[0], r[1], auth, c)
			}
		}
	}
	if c := do("GET", "/streams/ls_1", "Bearer s3cret-s3cret-s3cret"); c != 200 {
		t.Fatalf("with the credential: %d", c)
	}
	if c := do("DELETE", "/whip/k/s", "Bearer s3cret-s3cret-s3cret"); c != 200 {
		t.Fatalf("with the credential: %d", c)
	}
	// No secret configured: closed, not open.
	closed := httptest.NewServer(RequireCredential("", Handler(StreamsRoute(reg))))
	defer closed.Close()
	res, _ := http.Get(closed.URL + "/streams/ls_1")
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("no secret: %d", res.StatusCode)
	}
}
