package webrtc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/pion/webrtc/v4/pkg/media/oggreader"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/feed"
	"github.com/vidhost/vidhost/ingest/httpapi"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

const goodKey = "lsk0123456789abcdef0123456789abcdef"

// testMedia: 4 s of a 320x240 15 fps H.264 picture (one AU per element) and 20 ms Opus packets, made by ffmpeg.
type testMedia struct {
	aus  [][]byte // Annex-B access units
	opus [][]byte
}

var (
	mediaOnce sync.Once
	mediaVal  *testMedia
	mediaErr  error
)

func ffmpegPath() string {
	if p := os.Getenv("FFMPEG_PATH"); p != "" {
		return p
	}
	return "ffmpeg"
}

func loadMedia(t *testing.T) *testMedia {
	t.Helper()
	mediaOnce.Do(func() {
		dir, err := os.MkdirTemp("", "edge-webrtc-media")
		if err != nil {
			mediaErr = err
			return
		}
		defer os.RemoveAll(dir)
		v, a := filepath.Join(dir, "v.h264"), filepath.Join(dir, "a.ogg")
		for _, args := range [][]string{
			{"-f", "lavfi", "-i", "testsrc=size=320x240:rate=15", "-t", "4", "-c:v", "libx264", "-profile:v", "baseline", "-preset", "ultrafast", "-g", "15", "-bf", "0", "-pix_fmt", "yuv420p", "-f", "h264", v},
			{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "4", "-c:a", "libopus", "-page_duration", "20000", "-f", "ogg", a},
		} {
			if out, err := exec.Command(ffmpegPath(), append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
				mediaErr = errors.New(string(out))
				return
			}
		}
		m := &testMedia{}
		raw, _ := os.ReadFile(v)
		// Split on start codes here: h264.AnnexB.Unmarshal bounds one access unit's NAL units
		// (50) and refused the whole 4 s file, so every test that needs media was skipped.
		var cur [][]byte
		for _, n := range splitAnnexB(raw) {
			cur = append(cur, n)
			if typ := h264.NALUType(n[0] & 0x1f); typ == h264.NALUTypeIDR || typ == h264.NALUTypeNonIDR {
				b, _ := h264.AnnexB(cur).Marshal()
				m.aus = append(m.aus, b)
				cur = nil
			}
		}
		f, _ := os.Open(a)
		defer f.Close()
		r, _, err := oggreader.NewWith(f)
		if err != nil {
			mediaErr = err
			return
		}
		for {
			p, _, err := r.ParseNextPage()
			if err != nil {
				break
			}
			if len(p) > 0 && !bytes.HasPrefix(p, []byte("OpusTags")) {
				m.opus = append(m.opus, p)
			}
		}
		mediaVal = m
	})
	if mediaErr != nil {
		t.Skipf("no test media (ffmpeg with libx264/libopus needed): %v", mediaErr)
	}
	return mediaVal
}

// keyCheck is the media server's key check: goodKey (and other lsk… keys named in refusals) → admitted as ls_test.
type keyCheck struct {
	srv      *httptest.Server
	refusals map[string]string // key → refusal code
	asked    atomic.Int32
}

func newKeyCheck(t *testing.T) *keyCheck {
	k := &keyCheck{refusals: map[string]string{}}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.asked.Add(1)
		var b struct{ Key, App string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		if code, ok := k.refusals[b.Key]; ok || b.App != "whip" {
			w.WriteHeader(403)
			_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "reason": "refused: " + code})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"live_stream_id": "ls_test", "workspace_id": "ws_test"})
	}))
	t.Cleanup(k.srv.Close)
	return k
}

type edge struct {
	s    *Server
	reg  *core.Registry
	http *httptest.Server
	kc   *keyCheck
	cfg  config.Config
	// capture holds the feed of ls_test (GET /feed/ls_test, ingest/feed) as a reader got it.
	capture string
}

// startEdge runs the WebRTC server on a free loopback UDP port, with the feed's route; a reader
// keeps the first feed of ls_test (the MPEG-TS the live worker's ffmpeg would read) in e.capture.
func startEdge(t *testing.T, tweak func(*config.Config)) *edge {
	t.Helper()
	dir := t.TempDir()
	e := &edge{kc: newKeyCheck(t), capture: filepath.Join(dir, "republished.ts")}
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.WebRTCAddr = "127.0.0.1:0"
	cfg.CheckURL = e.kc.srv.URL
	cfg.ICETimeout = 10 * time.Second
	if tweak != nil {
		tweak(&cfg)
	}
	e.cfg = cfg
	e.reg = core.NewRegistry()
	e.s, err = Listen(cfg, keycheck.New(cfg.CheckURL), e.reg)
	if err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewServer(httpapi.Handler(append(append(e.s.Routes(), feed.Routes(e.reg)...), httpapi.StreamsRoute(e.reg))...))
	stop := make(chan struct{})
	go func() { // the first feed of ls_test, read to its end
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			res, err := http.Get(e.http.URL + "/feed/ls_test")
			if err != nil {
				continue
			}
			if res.StatusCode != http.StatusOK {
				res.Body.Close()
				continue
			}
			f, _ := os.Create(e.capture)
			_, _ = io.Copy(f, res.Body)
			f.Close()
			res.Body.Close()
			return
		}
	}()
	t.Cleanup(func() {
		close(stop)
		e.http.Close()
		e.s.Close()
	})
	return e
}

func clientAPI() *pion.API {
	m := &pion.MediaEngine{}
	_ = m.RegisterDefaultCodecs()
	se := pion.SettingEngine{}
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	ir := &interceptor.Registry{}
	_ = pion.RegisterDefaultInterceptors(m, ir)
	return pion.NewAPI(pion.WithMediaEngine(m), pion.WithSettingEngine(se), pion.WithInterceptorRegistry(ir))
}

func post(t *testing.T, url, contentType, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func errorCode(body string) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// testPublisher is an encoder publishing over WHIP from a pion peer connection.
type testPublisher struct {
	pc       *pion.PeerConnection
	location string
	plis     atomic.Int32
	stop     chan struct{}
	wg       sync.WaitGroup
}

// offerPublisher makes a publisher's offer (H.264 + Opus, sendonly), candidates gathered.
func offerPublisher(t *testing.T, codec string) (*pion.PeerConnection, *pion.TrackLocalStaticSample, *pion.TrackLocalStaticSample, string) {
	t.Helper()
	pc, err := clientAPI().NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	video, _ := pion.NewTrackLocalStaticSample(pion.RTPCodecCapability{MimeType: codec, ClockRate: 90000}, "video", "cam")
	audio, _ := pion.NewTrackLocalStaticSample(pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "cam")
	for _, tr := range []pion.TrackLocal{video, audio} {
		if _, err := pc.AddTransceiverFromTrack(tr, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendonly}); err != nil {
			t.Fatal(err)
		}
	}
	offer, _ := pc.CreateOffer(nil)
	gathered := pion.GatheringCompletePromise(pc)
	_ = pc.SetLocalDescription(offer)
	<-gathered
	return pc, video, audio, pc.LocalDescription().SDP
}

// newViewer is a recvonly peer connection with its offer made (candidates gathered), counting the RTP it gets.
func newViewer(t *testing.T) (*pion.PeerConnection, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	viewer, err := clientAPI().NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []pion.RTPCodecType{pion.RTPCodecTypeVideo, pion.RTPCodecTypeAudio} {
		_, _ = viewer.AddTransceiverFromKind(k, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionRecvonly})
	}
	var videoPkts, audioPkts atomic.Int32
	viewer.OnTrack(func(tr *pion.TrackRemote, _ *pion.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			if tr.Kind() == pion.RTPCodecTypeVideo {
				videoPkts.Add(1)
			} else {
				audioPkts.Add(1)
			}
		}
	})
	offer, _ := viewer.CreateOffer(nil)
	gathered := pion.GatheringCompletePromise(viewer)
	_ = viewer.SetLocalDescription(offer)
	<-gathered
	return viewer, &videoPkts, &audioPkts
}

// publishLive publishes on goodKey (a failure is the test's) and waits for ls_test to be live in the core over WHIP.
func (e *edge) publishLive(t *testing.T) *testPublisher {
	t.Helper()
	p, res, body := e.publish(t, goodKey)
	if p == nil {
		t.Fatalf("WHIP: %d %s", res.StatusCode, body)
	}
	eventually(t, "the WHIP source live", 10*time.Second, e.whipLive)
	return p
}

// whipLive: ls_test is in the core, published over WHIP.
func (e *edge) whipLive() bool {
	s := e.reg.Get("ls_test")
	return s != nil && s.Protocol() == "whip"
}

// unansweredOffer is a recvonly (video) viewer's offer, made before any candidate is gathered; the
// viewer is closed at once, so a WHEP session set up from the offer never completes ICE.
func unansweredOffer(t *testing.T) string {
	t.Helper()
	viewer, _ := clientAPI().NewPeerConnection(pion.Configuration{})
	_, _ = viewer.AddTransceiverFromKind(pion.RTPCodecTypeVideo, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionRecvonly})
	offer, _ := viewer.CreateOffer(nil)
	_ = viewer.SetLocalDescription(offer)
	_ = viewer.Close()
	return offer.SDP
}

// publish POSTs a publisher's offer; on 201 it sends the test media in real time, looping, until stopped.
func (e *edge) publish(t *testing.T, key string) (*testPublisher, *http.Response, string) {
	t.Helper()
	m := loadMedia(t)
	pc, video, audio, offer := offerPublisher(t, pion.MimeTypeH264)
	res, body := post(t, e.http.URL+"/whip/"+key, "application/sdp", offer)
	if res.StatusCode != http.StatusCreated {
		return nil, res, body
	}
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: body}); err != nil {
		t.Fatal(err)
	}
	p := &testPublisher{pc: pc, location: res.Header.Get("Location"), stop: make(chan struct{})}
	for _, s := range pc.GetSenders() {
		if s.Track() != nil && s.Track().Kind() == pion.RTPCodecTypeVideo {
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				for {
					pkts, _, err := s.ReadRTCP()
					if err != nil {
						return
					}
					for _, k := range pkts {
						if _, ok := k.(*rtcp.PictureLossIndication); ok {
							p.plis.Add(1)
						}
					}
				}
			}()
		}
	}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Second / 15)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				_ = video.WriteSample(media.Sample{Data: m.aus[i%len(m.aus)], Duration: time.Second / 15})
			}
		}
	}()
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				_ = audio.WriteSample(media.Sample{Data: m.opus[i%len(m.opus)], Duration: 20 * time.Millisecond})
			}
		}
	}()
	t.Cleanup(p.close)
	return p, res, body
}

func (p *testPublisher) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	_ = p.pc.Close()
	p.wg.Wait()
}

func eventually(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	until := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(until) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func do(t *testing.T, method, url string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// splitAnnexB: the NAL units of an Annex-B byte stream (3- or 4-byte start codes).
func splitAnnexB(b []byte) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0 && b[i+1] == 0 && b[i+2] == 1 {
			if start >= 0 {
				end := i
				if end > start && b[end-1] == 0 {
					end--
				}
				out = append(out, b[start:end])
			}
			start = i + 3
			i += 2
		}
	}
	if start >= 0 && start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
