package webrtc

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// ClientHeader names the viewer's address on a WHEP POST: the API sets it (after its own
// TRUSTED_PROXIES judgement) and only a caller with the edge's credential reaches the route, so
// it is believed; without it the peer's address counts.
const ClientHeader = "X-Vidhost-Client"

// offerLimiter is a token bucket of WHEP offers per client address (SPEC §22 abuse bounds): a
// burst, then a steady rate. A real player's offer and its few retries pass; 200 offers in 2.5 s
// from one address (red team) get about 15 sessions, each freed by the ICE timeout if it never
// connects, so the stream's viewer cap stays out of one address's reach.
type offerLimiter struct {
	burst, rate float64

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// pruneAbove: past this many addresses, buckets that have refilled are forgotten (they would
// start full anyway), so the map holds only addresses seen in the last burst/rate seconds.
const pruneAbove = 4096

func newOfferLimiter(burst int, perSecond float64) *offerLimiter {
	return &offerLimiter{burst: float64(burst), rate: perSecond, buckets: map[string]*bucket{}}
}

// take spends one token of addr's bucket; when there is none, false and how long until one is back.
func (l *offerLimiter) take(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= pruneAbove {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[addr] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

func (l *offerLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// clientOf is the address a WHEP offer is counted against.
func clientOf(r *http.Request) string {
	if a := r.Header.Get(ClientHeader); a != "" {
		return a
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
