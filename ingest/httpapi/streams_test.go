package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pion/rtp"
	"github.com/vidhost/vidhost/ingest/core"
)

// fakeViewer is a WHEP session as Health sees it: an id, connected or not.
type fakeViewer struct {
	id        string
	connected bool
}

func (f *fakeViewer) WritePacket(int, *rtp.Packet) {}
func (f *fakeViewer) Session() (string, bool)      { return f.id, f.connected }

// The viewers of a stream's WebRTC rendition (every RTMP/SRT source and every watermarked one
// plays from it) are counted and listed like the source's: connected ones only, by session, so
// the API's analytics start their views (lib/analytics/whep.ts reads whep_sessions).
func TestStreamsListsTheRenditionsConnectedSessions(t *testing.T) {
	reg := core.NewRegistry()
	h := httptest.NewServer(Handler(StreamsRoute(reg)))
	defer h.Close()
	src := reg.Acquire("ls_1")
	src.Publish(&core.Publisher{Protocol: "rtmp", Tracks: []core.Track{{Kind: "video", Codec: "h264"}}})
	rend := reg.Acquire(core.RenditionID("ls_1"))
	rend.Publish(&core.Publisher{Protocol: "rendition", Tracks: []core.Track{{Kind: "video", Codec: "h264"}}})
	for _, v := range []*fakeViewer{{"s-src", true}, {"s-pending", false}} {
		if err := src.AddReader(v, 10); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []*fakeViewer{{"r-1", true}, {"r-2", true}, {"r-pending", false}} {
		if err := rend.AddReader(v, 10); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Get(h.URL + "/streams/ls_1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var health core.Health
	if err := json.NewDecoder(res.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"s-src": true, "r-1": true, "r-2": true}
	if health.WHEPViewers != 3 || len(health.WHEPSessions) != 3 || !health.WebRTCRendition {
		t.Fatalf("want 3 connected sessions and the rendition, got %+v", health)
	}
	for _, id := range health.WHEPSessions {
		if !want[id] {
			t.Fatalf("unexpected session %q in %v", id, health.WHEPSessions)
		}
	}
}
