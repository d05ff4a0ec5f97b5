package keycheck

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const key = "lsk0123456789abcdef0123456789abcdef"

func TestCheckReadsTheAdmittedStreamAndRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"app":"whip"`) && strings.Contains(string(body), key):
			_, _ = w.Write([]byte(`{"live_stream_id":"ls_1","workspace_id":"ws_1"}`))
		default:
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"code":"disabled","reason":"live stream disabled"}`))
		}
	}))
	defer srv.Close()
	c := New(srv.URL)
	a, err := c.Check(context.Background(), key, "whip")
	if err != nil || a.LiveStreamID != "ls_1" || a.WorkspaceID != "ws_1" {
		t.Fatalf("got %+v, %v", a, err)
	}
	_, err = c.Check(context.Background(), key, "srt")
	var r *Refused
	if !errors.As(err, &r) || r.Code != "disabled" || r.Reason != "live stream disabled" {
		t.Fatalf("got %v", err)
	}
}

// A media server from before {"key","app"} reads the JSON as a key (bad_key): asked again with the bare key.
func TestCheckFallsBackToTheBareKey(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(body))
		if string(body) == key {
			w.WriteHeader(204)
			return
		}
		w.WriteHeader(403)
		_, _ = w.Write([]byte(`{"code":"bad_key","reason":"not a stream key"}`))
	}))
	defer srv.Close()
	a, err := New(srv.URL).Check(context.Background(), key, "srt")
	if err != nil || a.LiveStreamID != "" || len(bodies) != 2 {
		t.Fatalf("got %+v, %v after %q", a, err, bodies)
	}
}

func TestCheckUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	_, err := New(srv.URL).Check(context.Background(), key, "srt")
	var u *Unreachable
	if !errors.As(err, &u) {
		t.Fatalf("got %v", err)
	}
	srv.Close()
	if _, err := New(srv.URL).Check(context.Background(), key, "srt"); !errors.As(err, &u) {
		t.Fatalf("got %v", err)
	}
}
