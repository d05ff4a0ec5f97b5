package core

import "sync"

// Registry holds the Streams by live stream id; a Stream lives while something uses it.
type Registry struct {
	mu      sync.Mutex
	streams map[string]*entry
}

type entry struct {
	s    *Stream
	refs int
}

// NewRegistry is an empty Registry.
func NewRegistry() *Registry { return &Registry{streams: map[string]*entry{}} }

// Acquire returns the stream id (made on first use); Release it when done.
func (r *Registry) Acquire(id string) *Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.streams[id]
	if e == nil {
		e = &entry{s: &Stream{ID: id}}
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
