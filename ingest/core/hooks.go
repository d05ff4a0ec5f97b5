package core

import (
	"crypto/rand"
	"encoding/hex"
	"log"
)

// Hooks is the service told of publishers (keycheck.Client: POST /connected, /disconnected next
// to the key check). Connected's error, when refused is true, drops the publisher (the service
// will not take the broadcast: the stream was deleted or disabled meanwhile).
type Hooks interface {
	Connected(liveStreamID, session, protocol string) (refused bool, err error)
	Disconnected(liveStreamID, session, reason string) error
}

// hookQueue calls the hooks one at a time, in the order publishers came and went, off the
// media path (a slow service never holds a publisher).
type hookQueue struct {
	h  Hooks
	ch chan func()
}

func newHookQueue(h Hooks) *hookQueue {
	q := &hookQueue{h: h, ch: make(chan func(), 4096)}
	go func() {
		for f := range q.ch {
			f()
		}
	}()
	return q
}

// A rendition (the live worker's own output) is no encoder: the service is not told of it (its
// hooks answered 400 for the session it does not have).
func (q *hookQueue) connected(s *Stream, p *Publisher) {
	if q == nil || isRendition(s.ID) {
		return
	}
	id, session, protocol := s.ID, p.Session, p.Protocol
	q.ch <- func() {
		refused, err := q.h.Connected(id, session, protocol)
		if err == nil {
			return
		}
		log.Printf("%s: connected hook: %v", id, err)
		if refused {
			s.DropPublisher(p, err.Error())
		}
	}
}

func (q *hookQueue) disconnected(s *Stream, p *Publisher, reason string) {
	if q == nil || isRendition(s.ID) {
		return
	}
	id, session := s.ID, p.Session
	q.ch <- func() {
		if err := q.h.Disconnected(id, session, reason); err != nil {
			log.Printf("%s: disconnected hook: %v", id, err)
		}
	}
}

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "es_" + hex.EncodeToString(b[:])
}
