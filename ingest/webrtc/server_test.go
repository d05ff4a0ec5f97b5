package webrtc

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtcp"
	pion "github.com/pion/webrtc/v4"
	pmedia "github.com/pion/webrtc/v4/pkg/media"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
)

// A pion encoder publishes over WHIP: the edge publishes H.264 + Opus into the core (the feed a
// live worker reads as MPEG-TS),
// fans the RTP out to a WHEP viewer (with a PLI upstream when it joins), reports the stream's
// health, refuses a second publisher, and frees everything on DELETE.
//
// Not parallel: it counts the process's goroutines. The other tests of the package (each with an
// edge of its own on free ports) run side by side after it.
func TestWHIPPublishRepublishesAndFansOutToWHEP(t *testing.T) {
	baseline := runtime.NumGoroutine()
	e := startEdge(t, nil)
	p, res, body := e.publish(t, goodKey)
	if p == nil {
		t.Fatalf("WHIP: %d %s", res.StatusCode, body)
	}
	if !strings.HasPrefix(p.location, "/whip/"+goodKey+"/") || res.Header.Get("Content-Type") != "application/sdp" {
		t.Fatalf("Location %q, Content-Type %q", p.location, res.Header.Get("Content-Type"))
	}
	eventually(t, "the feed reader receiving MPEG-TS", 10*time.Second, func() bool {
		st, err := os.Stat(e.capture)
		return err == nil && st.Size() > 20_000
	})

	// A second publisher on the key is refused while the first is live.
	if res, body := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", mustOffer(t)); res.StatusCode != http.StatusConflict || errorCode(body) != "busy" {
		t.Fatalf("second publisher: %d %s", res.StatusCode, body)
	}

	// A WHEP viewer gets the publisher's video and audio RTP; its joining asks the publisher for a keyframe.
	plisBefore := p.plis.Load()
	viewer, videoPkts, audioPkts := newViewer(t)
	defer viewer.Close()
	res, answer := post(t, e.http.URL+"/whep/ls_test", "application/sdp", viewer.LocalDescription().SDP)
	if res.StatusCode != http.StatusCreated || !strings.HasPrefix(res.Header.Get("Location"), "/whep/ls_test/") {
		t.Fatalf("WHEP: %d %s", res.StatusCode, answer)
	}
	if err := viewer.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the viewer receiving video and audio", 10*time.Second, func() bool { return videoPkts.Load() > 30 && audioPkts.Load() > 20 })
	eventually(t, "a PLI sent upstream for the viewer", 5*time.Second, func() bool { return p.plis.Load() > plisBefore })

	// Health: what the edge measures of the WHIP input.
	hres, err := http.Get(e.http.URL + "/streams/ls_test")
	if err != nil {
		t.Fatal(err)
	}
	var h core.Health
	_ = json.NewDecoder(hres.Body).Decode(&h)
	hres.Body.Close()
	if h.Protocol != "whip" || h.Video == nil || h.Video.Codec != "h264" || h.Video.Width != 320 || h.Video.Height != 240 || h.Audio == nil || h.Audio.Codec != "opus" || h.WHEPViewers != 1 || h.BitrateKbps <= 0 ||
		len(h.WHEPSessions) != 1 || !strings.HasSuffix(res.Header.Get("Location"), "/"+h.WHEPSessions[0]) {
		t.Fatalf("health %+v video %+v", h, h.Video)
	}
	if code := do(t, http.MethodGet, e.http.URL+"/streams/ls_nothing"); code != http.StatusNotFound {
		t.Fatalf("health of an unknown stream: %d", code)
	}

	// DELETE ends the viewer, then the publisher; the feed ends.
	if code := do(t, http.MethodDelete, e.http.URL+res.Header.Get("Location")); code != http.StatusOK {
		t.Fatalf("DELETE viewer: %d", code)
	}
	if code := do(t, http.MethodDelete, e.http.URL+"/whip/"+goodKey+"/nope"); code != http.StatusNotFound {
		t.Fatalf("DELETE an unknown session: %d", code)
	}
	if code := do(t, http.MethodDelete, e.http.URL+p.location); code != http.StatusOK {
		t.Fatalf("DELETE publisher: %d", code)
	}
	if code := do(t, http.MethodPatch, e.http.URL+p.location); code != http.StatusMethodNotAllowed {
		t.Fatalf("PATCH: %d", code)
	}
	eventually(t, "every session freed", 5*time.Second, func() bool { return e.s.Sessions() == 0 && e.reg.Len() == 0 })
	p.close()
	viewer.Close()

	// What the feed's reader got is MPEG-TS with H.264 (320x240) and Opus, which ffmpeg decodes
	// as the live worker's does (the mpegts demuxer only).
	out, err := exec.Command(strings.Replace(ffmpegPath(), "ffmpeg", "ffprobe", 1), "-v", "error", "-format_whitelist", "mpegts", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", e.capture).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v %s", err, out)
	}
	if got := string(out); !strings.Contains(got, "h264,320,240") || !strings.Contains(got, "opus") {
		t.Fatalf("the feed's streams: %q", out)
	}
	if out, err := exec.Command(ffmpegPath(), "-v", "error", "-f", "mpegts", "-i", e.capture, "-map", "0:v:0", "-f", "null", "-").CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("decoding the feed: %v %s", err, out)
	}

	// The key is free again.
	p2, res2, body2 := e.publish(t, goodKey)
	if p2 == nil {
		t.Fatalf("publishing again after DELETE: %d %s", res2.StatusCode, body2)
	}
	p2.close()
	eventually(t, "the second session freed", 15*time.Second, func() bool { return e.s.Sessions() == 0 && e.reg.Len() == 0 })
	e.http.Close()
	e.s.Close()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for runtime.NumGoroutine() > baseline+5 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left behind (baseline %d):\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mustOffer(t *testing.T) string {
	pc, _, _, offer := offerPublisher(t, pion.MimeTypeH264)
	_ = pc.Close() // the offer is all that is needed
	return offer
}

// Refusals before any WebRTC state: the key check's answers, and hostile offers.
func TestWHIPRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	offer := mustOffer(t)
	keys := map[string]string{"unknown": "lsk" + strings.Repeat("1", 32), "disabled": "lsk" + strings.Repeat("2", 32), "busy": "lsk" + strings.Repeat("3", 32), "plan_limit": "lsk" + strings.Repeat("4", 32)}
	for code, key := range keys {
		e.kc.refusals[key] = code
	}
	for code, want := range map[string]int{"unknown": 401, "disabled": 403, "busy": 409, "plan_limit": 429} {
		if res, body := post(t, e.http.URL+"/whip/"+keys[code], "application/sdp", offer); res.StatusCode != want || errorCode(body) != code {
			t.Errorf("%s: %d %s", code, res.StatusCode, body)
		}
	}

	asked := e.kc.asked.Load()
	noMedia := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
	vp8 := strings.NewReplacer("H264", "VP8").Replace(offer)
	var many strings.Builder
	many.WriteString(strings.TrimRight(offer, "\r\n") + "\r\n")
	for i := range 10_000 {
		fmt.Fprintf(&many, "a=candidate:%d 1 udp 2130706431 10.0.%d.%d %d typ host\r\n", i, i/250, i%250, 10000+i)
	}
	var some strings.Builder
	some.WriteString(strings.TrimRight(offer, "\r\n") + "\r\n")
	for i := range 100 {
		fmt.Fprintf(&some, "a=candidate:%d 1 udp 2130706431 10.0.0.%d 9 typ host\r\n", i, i)
	}
	for _, c := range []struct{ name, ct, body, code string }{
		{"malformed SDP", "application/sdp", "this is not SDP", "bad_sdp"},
		{"truncated SDP", "application/sdp", offer[:len(offer)/3] + "\r\nm=video x\r\n", "bad_sdp"},
		{"no media", "application/sdp", noMedia, "no_media"},
		{"VP8 only", "application/sdp", vp8, "unsupported_codec"},
		{"10,000 ICE candidates (over 64 KB)", "application/sdp", many.String(), "sdp_too_large"},
		{"100 ICE candidates", "application/sdp", some.String(), "too_many_candidates"},
	} {
		if res, body := post(t, e.http.URL+"/whip/"+goodKey, c.ct, c.body); res.StatusCode != http.StatusBadRequest || errorCode(body) != c.code {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, body)
		}
	}
	if res, body := post(t, e.http.URL+"/whip/"+goodKey, "text/plain", offer); res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d %s", res.StatusCode, body)
	}
	for _, key := range []string{"not-a-key", strings.Repeat("a", 5000), "LSK" + strings.Repeat("0", 32)} {
		if res, body := post(t, e.http.URL+"/whip/"+key, "application/sdp", offer); res.StatusCode != http.StatusUnauthorized || errorCode(body) != "bad_key" {
			t.Errorf("key %.20q: %d %s", key, res.StatusCode, body)
		}
	}
	if got := e.kc.asked.Load(); got != asked {
		t.Errorf("the key check was asked about hostile offers or keys (%d times)", got-asked)
	}
	// WHEP without a WebRTC publisher.
	if res, body := post(t, e.http.URL+"/whep/ls_test", "application/sdp", offer); res.StatusCode != http.StatusNotFound || errorCode(body) != "no_webrtc_source" {
		t.Errorf("WHEP without a source: %d %s", res.StatusCode, body)
	}
	// The key check unreachable → 503.
	e.kc.srv.Close()
	if res, body := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", offer); res.StatusCode != http.StatusServiceUnavailable || errorCode(body) != "key_check_unavailable" {
		t.Errorf("key check down: %d %s", res.StatusCode, body)
	}
	if e.s.Sessions() != 0 || e.reg.Len() != 0 {
		t.Fatalf("refusals left %d sessions, %d streams", e.s.Sessions(), e.reg.Len())
	}
}

// A publisher that never completes ICE is dropped after the timeout and its key freed.
func TestWHIPPublisherThatNeverCompletesICEIsFreed(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(c *config.Config) { c.ICETimeout = time.Second })
	res, body := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", mustOffer(t)) // the answer is never applied
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	if res, _ := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", mustOffer(t)); res.StatusCode != http.StatusConflict {
		t.Fatalf("while it waits for ICE, the key is taken: %d", res.StatusCode)
	}
	eventually(t, "the session dropped", 10*time.Second, func() bool { return e.s.Sessions() == 0 && e.reg.Len() == 0 })
	p, res, body := e.publish(t, goodKey)
	if p == nil {
		t.Fatalf("the key was not freed: %d %s", res.StatusCode, body)
	}
}

// WHEP viewers of one stream are bounded (LIVE_WHEP_MAX_VIEWERS, 200): the 201st gets 429; viewers
// that never complete ICE are freed.
func TestWHEPViewersAreBounded(t *testing.T) {
	t.Parallel()
	// One client makes every offer: the per-address bucket is not what this test is about.
	e := startEdge(t, func(c *config.Config) { c.ICETimeout, c.ICEFailed, c.WHEPOfferBurst = time.Minute, time.Minute, 1000 })
	if e.cfg.WHEPMaxViewers != 200 {
		t.Fatalf("default LIVE_WHEP_MAX_VIEWERS %d", e.cfg.WHEPMaxViewers)
	}
	p := e.publishLive(t)
	offer := unansweredOffer(t)
	start := time.Now()
	var locations []string
	for i := range 200 {
		res, body := post(t, e.http.URL+"/whep/ls_test", "application/sdp", offer)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("viewer %d: %d %s", i+1, res.StatusCode, body)
		}
		locations = append(locations, res.Header.Get("Location"))
	}
	t.Logf("200 WHEP sessions set up in %v", time.Since(start))
	if res, body := post(t, e.http.URL+"/whep/ls_test", "application/sdp", offer); res.StatusCode != http.StatusTooManyRequests || errorCode(body) != "too_many_viewers" {
		t.Fatalf("viewer 201: %d %s", res.StatusCode, body)
	}
	for _, l := range locations[:100] {
		if code := do(t, http.MethodDelete, e.http.URL+l); code != http.StatusOK {
			t.Fatalf("DELETE %s: %d", l, code)
		}
	}
	if got := e.reg.Get("ls_test").Readers(); got != 100 {
		t.Fatalf("%d viewers after 100 DELETEs", got)
	}
	// The publisher leaving ends every viewer's session.
	if code := do(t, http.MethodDelete, e.http.URL+p.location); code != http.StatusOK {
		t.Fatal(code)
	}
	eventually(t, "every viewer dropped with the publisher", 10*time.Second, func() bool { return e.s.Sessions() == 0 && e.reg.Len() == 0 })
}

// LIVE_WEBRTC_ANNOUNCE's addresses are the answer's host candidates (NAT 1:1), on the one UDP port.
func TestAnnouncedAddressesAreTheCandidates(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(c *config.Config) { c.Announce = []string{"203.0.113.7"} })
	res, answer := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", mustOffer(t))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("%d %s", res.StatusCode, answer)
	}
	port := e.s.udp.LocalAddr().(*net.UDPAddr).Port
	if !strings.Contains(answer, fmt.Sprintf("203.0.113.7 %d typ host", port)) || strings.Contains(answer, "127.0.0.1") {
		t.Fatalf("candidates in the answer:\n%s", answer)
	}
	_ = do(t, http.MethodDelete, e.http.URL+res.Header.Get("Location"))
}

// A publisher that goes silent without DELETE (its network gone) is dropped once ICE fails
// (about 8 s), freeing the key for its reconnect.
func TestSilentPublisherIsDroppedWhenICEFails(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	media := loadMedia(t)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &pion.MediaEngine{}
	_ = m.RegisterDefaultCodecs()
	se := pion.SettingEngine{}
	se.SetICEUDPMux(pion.NewICEUDPMux(nil, udp))
	se.SetIncludeLoopbackCandidate(true)
	pc, err := pion.NewAPI(pion.WithMediaEngine(m), pion.WithSettingEngine(se)).NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	video, _ := pion.NewTrackLocalStaticSample(pion.RTPCodecCapability{MimeType: pion.MimeTypeH264, ClockRate: 90000}, "video", "cam")
	_, _ = pc.AddTransceiverFromTrack(video, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendonly})
	connected := make(chan struct{})
	pc.OnConnectionStateChange(func(s pion.PeerConnectionState) {
		if s == pion.PeerConnectionStateConnected {
			close(connected)
		}
	})
	offer, _ := pc.CreateOffer(nil)
	gathered := pion.GatheringCompletePromise(pc)
	_ = pc.SetLocalDescription(offer)
	<-gathered
	res, answer := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", pc.LocalDescription().SDP)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("%d %s", res.StatusCode, answer)
	}
	_ = pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer})
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("never connected")
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(time.Second / 15)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = video.WriteSample(pmedia.Sample{Data: media.aus[i%len(media.aus)], Duration: time.Second / 15})
			}
		}
	}()
	eventually(t, "the publisher live", 10*time.Second, e.whipLive)
	udp.Close() // the publisher's network is gone: no DTLS close, no DELETE
	start := time.Now()
	eventually(t, "the silent publisher dropped", 20*time.Second, func() bool { return e.s.Sessions() == 0 })
	t.Logf("dropped %v after going silent", time.Since(start).Round(100*time.Millisecond))
	p, res, body := e.publish(t, goodKey)
	if p == nil {
		t.Fatalf("reconnecting: %d %s", res.StatusCode, body)
	}
}

// A WHEP viewer that never completes ICE is dropped after the timeout.
func TestWHEPViewerThatNeverCompletesICEIsFreed(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(c *config.Config) { c.ICETimeout = time.Second })
	e.publishLive(t)
	offer := unansweredOffer(t) // its offer is posted, its answer never applied
	if res, body := post(t, e.http.URL+"/whep/ls_test", "application/sdp", offer); res.StatusCode != http.StatusCreated {
		t.Fatalf("WHEP: %d %s", res.StatusCode, body)
	}
	if got := e.reg.Get("ls_test").Readers(); got != 1 {
		t.Fatalf("%d viewers", got)
	}
	if h := health(t, e); h.WHEPViewers != 0 || len(h.WHEPSessions) != 0 {
		t.Fatalf("a viewer that has not connected is counted: %+v", h)
	}
	eventually(t, "the viewer dropped", 10*time.Second, func() bool { return e.reg.Get("ls_test").Readers() == 0 && e.s.Sessions() == 1 })
}

// A publisher whose encoder sends a keyframe only when asked (browsers do) is asked every ~1 s:
// the republished feed's GOP stays bounded.
func TestAPublisherWithoutKeyframesIsAskedForThem(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	m := loadMedia(t)
	pc, video, _, offer := offerPublisher(t, pion.MimeTypeH264)
	res, answer := post(t, e.http.URL+"/whip/"+goodKey, "application/sdp", offer)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("%d %s", res.StatusCode, answer)
	}
	_ = pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer})
	var plis atomic.Int32
	for _, s := range pc.GetSenders() {
		if s.Track() != nil && s.Track().Kind() == pion.RTPCodecTypeVideo {
			go func() {
				for {
					pkts, _, err := s.ReadRTCP()
					if err != nil {
						return
					}
					for _, k := range pkts {
						if _, ok := k.(*rtcp.PictureLossIndication); ok {
							plis.Add(1)
						}
					}
				}
			}()
		}
	}
	// One keyframe, then only the frames that follow it, over and over (ignoring every PLI).
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(time.Second / 15)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				au := m.aus[0]
				if i > 0 {
					au = m.aus[1+(i-1)%14]
				}
				_ = video.WriteSample(pmedia.Sample{Data: au, Duration: time.Second / 15})
			}
		}
	}()
	eventually(t, "the publisher live", 10*time.Second, e.whipLive)
	start := plis.Load()
	time.Sleep(5 * time.Second)
	if got := plis.Load() - start; got < 4 {
		t.Fatalf("%d PLIs in 5 s without a keyframe", got)
	}
}

// A PLI is held back only while an earlier one is outstanding: sent under 500 ms ago and not yet
// answered by a keyframe. (A viewer joining just after a keyframe went by got no PLI and waited a
// whole GOP: the WHEP test's "a PLI sent upstream for the viewer" timed out under load.)
func TestPLIDue(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name                  string
		now, lastPLI, lastKey time.Time
		due                   bool
	}{
		{"no PLI yet", ms(0), time.Time{}, time.Time{}, true},
		{"outstanding: 100 ms ago, no keyframe since", ms(100), ms(0), time.Time{}, false},
		{"outstanding: the last keyframe came before it", ms(400), ms(100), ms(50), false},
		{"answered: a keyframe came after it", ms(150), ms(0), ms(120), true},
		{"unanswered but 500 ms old", ms(500), ms(0), time.Time{}, true},
	} {
		if got := pliDue(c.now, c.lastPLI, c.lastKey); got != c.due {
			t.Errorf("%s: pliDue = %v, want %v", c.name, got, c.due)
		}
	}
}
