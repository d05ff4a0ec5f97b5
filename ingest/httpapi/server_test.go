package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vidhost/vidhost/ingest/core"
)

func TestHealthzStreamsAndUnknownPaths(t *testing.T) {
	reg := core.NewRegistry()
	h := httptest.NewServer(Handler(StreamsRoute(reg)))
	defer h.Close()
	res, err := http.Get(h.URL + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	for _, path := range []string{"/nope", "/streams/ls_none"} {
		res, err := http.Get(h.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != 404 || body.Error.Code == "" || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %+v", path, res.StatusCode, body)
		}
	}
	// A stream the edge only packages LL-HLS for has health too.
	s := reg.Acquire("ls_1")
	s.SetLLHLS(1)
	res, _ = http.Get(h.URL + "/streams/ls_1")
	var health core.Health
	_ = json.NewDecoder(res.Body).Decode(&health)
	res.Body.Close()
	if res.StatusCode != 200 || !health.LLHLS || health.Protocol != "" {
		t.Fatalf("LL-HLS only: %d %+v", res.StatusCode, health)
	}
}
