package webrtc

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The bucket: a burst of 10, then 2 a second, per address; the wait until the next token.
func TestOfferLimiterBurstThenRate(t *testing.T) {
	t.Parallel()
	l := newOfferLimiter(10, 2)
	t0 := time.Unix(1_000_000, 0)
	for i := range 10 {
		if ok, _ := l.take("198.51.100.1", t0); !ok {
			t.Fatalf("offer %d of the burst refused", i+1)
		}
	}
	ok, wait := l.take("198.51.100.1", t0)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("11th offer at once: %v, wait %v", ok, wait)
	}
	if ok, _ := l.take("198.51.100.2", t0); !ok {
		t.Fatal("another address has its own bucket")
	}
	if ok, _ := l.take("198.51.100.1", t0.Add(499*time.Millisecond)); ok {
		t.Fatal("a token back before 500 ms")
	}
	if ok, _ := l.take("198.51.100.1", t0.Add(time.Second)); !ok {
		t.Fatal("no token back after 1 s")
	}
	// Addresses whose bucket has refilled are forgotten once many are held (one that comes back starts full).
	for i := range pruneAbove + 10 {
		l.take(string(rune(i))+"x", t0.Add(time.Minute+time.Duration(i)*time.Second))
	}
	if len(l.buckets) > pruneAbove {
		t.Fatalf("%d buckets held", len(l.buckets))
	}
}

func TestClientOf(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/whep/ls_x", nil)
	r.RemoteAddr = "10.0.0.9:4567"
	if got := clientOf(r); got != "10.0.0.9" {
		t.Fatalf("peer: %q", got)
	}
	r.Header.Set(ClientHeader, "203.0.113.5")
	if got := clientOf(r); got != "203.0.113.5" {
		t.Fatalf("header: %q", got)
	}
}

// Only public unicast candidates are kept (SPEC §22): loopback, link-local, private, names go.
func TestDropPrivateCandidates(t *testing.T) {
	t.Parallel()
	keep := []string{"203.0.113.7", "2001:db8::1", "8.8.8.8"}
	drop := []string{"127.0.0.1", "127.9.9.9", "::1", "169.254.10.1", "fe80::1", "10.1.2.3", "172.16.0.1", "172.31.255.1", "192.168.1.1", "fd00::1", "fc12::3", "0.0.0.0", "::", "224.0.0.1", "::ffff:127.0.0.1", "abcd-1234.local", "localhost"}
	offer := "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
	for i, a := range append(append([]string{}, keep...), drop...) {
		offer += "a=candidate:" + string(rune('a'+i)) + " 1 udp 2122260223 " + a + " 5000 typ host\r\n"
	}
	offer += "a=candidate:short 1 udp\r\na=end-of-candidates\r\n"
	out, n := dropPrivateCandidates(offer)
	if n != len(drop)+1 {
		t.Fatalf("dropped %d, want %d:\n%s", n, len(drop)+1, out)
	}
	for _, a := range keep {
		if !containsLine(out, " "+a+" 5000 typ host") {
			t.Errorf("%s dropped", a)
		}
	}
	for _, a := range drop {
		if containsLine(out, " "+a+" 5000 ") {
			t.Errorf("%s kept", a)
		}
	}
	if !containsLine(out, "a=end-of-candidates") || !containsLine(out, "m=video 9") {
		t.Fatalf("other lines lost:\n%s", out)
	}
}

func containsLine(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
