package webrtc

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
)

// An offer whose candidates name the machine's own loopback ports gets no STUN from the edge
// (red team: 192 packets to 64 loopback ports in 10 s); LIVE_WEBRTC_ALLOW_PRIVATE_CANDIDATES
// turns the checks back on (and shows the sockets would have seen them).
func TestLoopbackCandidatesGetNoSTUN(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			t.Parallel()
			e := startEdge(t, func(c *config.Config) { c.AllowPrivateCandidates = allow })
			var got atomic.Int32
			var cands []string
			for i := range 4 {
				u, err := net.ListenPacket("udp4", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { u.Close() })
				go func() {
					buf := make([]byte, 1500)
					for {
						if _, _, err := u.ReadFrom(buf); err != nil {
							return
						}
						got.Add(1)
					}
				}()
				cands = append(cands, fmt.Sprintf("a=candidate:%d 1 udp 2130706431 127.0.0.1 %d typ host", i+1, u.LocalAddr().(*net.UDPAddr).Port))
			}
			res, body := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", withCandidates(mustOffer(t), cands))
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("WHIP: %d %s", res.StatusCode, body)
			}
			time.Sleep(3 * time.Second)
			n := got.Load()
			t.Logf("allow=%v: %d packets to the offer's loopback candidates in 3 s", allow, n)
			if !allow && n != 0 {
				t.Fatalf("%d packets sent to loopback candidates", n)
			}
			if allow && n == 0 {
				t.Fatal("no checks even when private candidates are allowed: the test sees nothing")
			}
			_ = do(t, http.MethodDelete, e.http.URL+res.Header.Get("Location"))
		})
	}
}

// withCandidates replaces the offer's candidates by cands, in its first media section.
func withCandidates(offer string, cands []string) string {
	var out []string
	placed := false
	for _, l := range strings.Split(strings.TrimRight(offer, "\r\n"), "\r\n") {
		if strings.HasPrefix(l, "a=candidate:") || strings.HasPrefix(l, "a=end-of-candidates") {
			continue
		}
		out = append(out, l)
		if !placed && strings.HasPrefix(l, "a=mid:") {
			out = append(out, cands...)
			placed = true
		}
	}
	return strings.Join(out, "\r\n") + "\r\n"
}

// Red team: 200 WHEP offers from one address in 2.5 s filled the viewer cap without connecting.
// Now a burst and a rate per address (429 + Retry-After past them); another address still gets
// its 201, and the sessions that never connect free their slots at the ICE timeout and are not
// counted as viewers in the meantime.
func TestWHEPOffersAreRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(c *config.Config) { c.ICETimeout = 3 * time.Second })
	e.publishLive(t)
	offer := unansweredOffer(t)
	whep := func(from string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/whep/ls_test", strings.NewReader(offer))
		req.Header.Set("Content-Type", "application/sdp")
		req.Header.Set(ClientHeader, from)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(res))
		return res, b.String()
	}
	start := time.Now()
	created, limited := 0, 0
	for range 200 {
		res, body := whep("198.51.100.66")
		switch res.StatusCode {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			limited++
			if errorCode(body) != "too_many_offers" {
				t.Fatalf("429 %s", body)
			}
			if ra, _ := strconv.Atoi(res.Header.Get("Retry-After")); ra < 1 {
				t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
			}
		default:
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	}
	el := time.Since(start)
	t.Logf("200 offers from one address in %v: %d sessions, %d refused", el.Round(time.Millisecond), created, limited)
	if max := 10 + int(el.Seconds()*2) + 1; created > max || created < 10 {
		t.Fatalf("%d sessions from one address in %v (bucket allows %d)", created, el, max)
	}
	if got := e.reg.Get("ls_test").Readers(); got > created {
		t.Fatalf("%d readers", got)
	}
	// Never connected: not viewers in the edge's stats.
	if h := health(t, e); h.WHEPViewers != 0 || len(h.WHEPSessions) != 0 {
		t.Fatalf("unconnected sessions counted: %+v", h)
	}
	if res, body := whep("203.0.113.10"); res.StatusCode != http.StatusCreated {
		t.Fatalf("another address: %d %s", res.StatusCode, body)
	}
	eventually(t, "the unconnected sessions freed by the ICE timeout", 15*time.Second, func() bool { return e.reg.Get("ls_test").Readers() == 0 })
	if res, _ := whep("198.51.100.66"); res.StatusCode != http.StatusCreated {
		t.Fatalf("the address, later: %d", res.StatusCode)
	}
}

func readAll(res *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func health(t *testing.T, e *edge) core.Health {
	t.Helper()
	res, err := http.Get(e.http.URL + "/streams/ls_test")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h core.Health
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}
