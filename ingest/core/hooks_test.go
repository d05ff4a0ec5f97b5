package core

import (
	"sync"
	"testing"
	"time"
)

type hookCalls struct {
	mu  sync.Mutex
	ids []string
}

func (h *hookCalls) Connected(id, _, _ string) (bool, error) {
	h.add("connected " + id)
	return false, nil
}
func (h *hookCalls) Disconnected(id, _, _ string) error { h.add("disconnected " + id); return nil }
func (h *hookCalls) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = append(h.ids, s)
}

// An encoder's publish and leave are told to the service; the WebRTC rendition's (the live
// worker's own output, with no encoder session) are not: the hooks answered it 400.
func TestHooksAreForEncodersNotRenditions(t *testing.T) {
	reg := NewRegistry()
	hooks := &hookCalls{}
	reg.SetHooks(hooks)
	for _, id := range []string{RenditionID("ls_h"), "ls_h"} {
		st := reg.Acquire(id)
		p := &Publisher{Protocol: "rtmp", Session: "es_1"}
		st.Publish(p)
		st.Unpublish(p)
	}
	want := []string{"connected ls_h", "disconnected ls_h"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		hooks.mu.Lock()
		got := append([]string(nil), hooks.ids...)
		hooks.mu.Unlock()
		if len(got) >= len(want) {
			if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("hooks %v, want %v", got, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hooks %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
