package core

import (
	"strings"
	"sync"
)

// Registry holds the Streams by live stream id; a Stream lives while something uses it.
type Registry struct {
	mu      sync.Mutex
	streams map[string]*entry
	hooks   *hookQueue
}

type entry struct {
	s    *Stream
	refs int
}

// NewRegistry is an empty Registry.
func NewRegistry() *Registry { return &Registry{streams: map[string]*entry{}} }

// SetHooks tells h of every publisher that starts or ends (before any stream is acquired).
func (r *Registry) SetHooks(h Hooks) {
	q := newHookQueue(h)
	r.mu.Lock()
	r.hooks = q
	r.mu.Unlock()
}

// Acquire returns the stream id (made on first use); Release it when done.
func (r *Registry) Acquire(id string) *Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.streams[id]
	if e == nil {
		e = &entry{s: &Stream{ID: id, hooks: r.hooks}}
		r.streams[id] = e
	}
	e.refs++
	return e.s
}

// Release drops one use of the stream id.
func (r *Registry) Release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.streams[id]; e != nil {
		e.refs--
		if e.refs <= 0 {
			delete(r.streams, id)
		}
	}
}

// Get is the stream id, or nil.
func (r *Registry) Get(id string) *Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.streams[id]; e != nil {
		return e.s
	}
	return nil
}

// Len counts the streams (tests: nothing leaks).
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.streams)
}

// RenditionID is the stream a live stream's WebRTC rendition is published to
// (webrtc/rendition.go): a key no live stream id takes (ids have no slash).
func RenditionID(liveStreamID string) string { return liveStreamID + renditionSuffix }

const renditionSuffix = "/webrtc"

// isRendition: the stream is a WebRTC rendition (the service's own output, not an encoder's).
func isRendition(id string) bool { return strings.HasSuffix(id, renditionSuffix) }
