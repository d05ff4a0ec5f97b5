package rtmp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/gortmplib"
	"github.com/bluenviron/gortmplib/pkg/codecs"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/keycheck"
)

// readTimeout ends a publisher that sends nothing for this long.
const readTimeout = 10 * time.Second

// conn is one encoder.
type conn struct {
	s  *Server
	nc net.Conn
}

// streamKey is the key of a publish URL's path, /live/<key> (the app encoders are given).
func streamKey(path string) (string, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 2 || parts[0] != "live" {
		return "", errors.New("not /live/<stream key>")
	}
	if !keycheck.IsStreamKey(parts[1]) {
		return "", errors.New("not a stream key")
	}
	return parts[1], nil
}

// short is a key as logs show it (SPEC §22: never in full).
func short(key string) string {
	if len(key) > 6 {
		return key[:6] + "…"
	}
	return key
}

// run serves the encoder until it leaves or breaks a bound; it returns why it ended.
func (c *conn) run() string {
	_ = c.nc.SetDeadline(time.Now().Add(readTimeout))
	bounded := &boundedConn{Conn: c.nc, bound: core.RateBound{Max: c.s.cfg.MaxBitsPerSecond, Window: c.s.cfg.RateWindow}}
	sc := &gortmplib.ServerConn{RW: bounded}
	if err := sc.Initialize(); err != nil {
		return fmt.Sprintf("handshake: %v", err)
	}
	if err := sc.AcceptConn(); err != nil {
		return fmt.Sprintf("connect: %v", err)
	}
	if !sc.Publish {
		_ = sc.RejectAction()
		return "refused: playing is not served (viewers watch HLS or WHEP)"
	}
	key, err := streamKey(sc.URL.Path)
	if err != nil {
		_ = sc.RejectAction()
		return "refused: " + err.Error()
	}
	if !c.s.reserve(key) {
		_ = sc.RejectAction()
		return fmt.Sprintf("refused %s: the stream already has a publisher", short(key))
	}
	defer c.s.release(key)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	a, err := c.s.check.Check(ctx, key, "rtmp")
	cancel()
	if err != nil {
		_ = sc.RejectAction()
		return fmt.Sprintf("refused %s: %v", short(key), err)
	}
	r := &gortmplib.Reader{Conn: sc}
	if err := r.Initialize(); err != nil { // accepts the publish, then reads the tracks
		return fmt.Sprintf("%s: tracks: %v", short(key), err)
	}
	var stream *core.Stream
	pub := &core.Publisher{Protocol: "rtmp", Close: func() { c.nc.Close() }}
	tracks, err := publishTracks(r, func() *core.Stream { return stream }, pub)
	if err != nil {
		return fmt.Sprintf("%s: dropped: %v", short(key), err)
	}
	pub.Tracks = tracks
	if a.LiveStreamID != "" {
		stream = c.s.reg.Acquire(a.LiveStreamID)
		defer c.s.reg.Release(a.LiveStreamID)
		if !stream.TryPublish(pub) {
			return fmt.Sprintf("refused %s: the stream already has a publisher", short(key))
		}
		defer stream.Unpublish(pub)
		bounded.mu.Lock()
		bounded.stream, bounded.pub = stream, pub
		early := bounded.early
		bounded.mu.Unlock()
		if early != "" {
			// Past the bound while its tracks were read (up to 2 s of media): it was published so
			// the service hears it came, and is dropped now with the reason.
			bounded.over = early
			stream.DropPublisher(pub, early)
			return fmt.Sprintf("%s: dropped: %s", short(key), early)
		}
	}
	for {
		if stream == nil { // no live stream to publish into (a bare 204): bounded all the same
			bounded.mu.Lock()
			early := bounded.early
			bounded.mu.Unlock()
			if early != "" {
				return fmt.Sprintf("%s: dropped: %s", short(key), early)
			}
		}
		_ = c.nc.SetDeadline(time.Now().Add(readTimeout))
		if err := r.Read(); err != nil {
			if bounded.over != "" {
				return fmt.Sprintf("%s: dropped: %s", short(key), bounded.over)
			}
			return fmt.Sprintf("%s: %v", short(key), err)
		}
	}
}

// publishTracks are the encoder's tracks as the core names them; their units go into the
// stream stream() returns (nil: the key check named no live stream, the data is read and
// dropped). A video unit past the input bounds drops the publisher with the reason.
func publishTracks(r *gortmplib.Reader, stream func() *core.Stream, pub *core.Publisher) ([]core.Track, error) {
	var tracks []core.Track
	unit := func(u *core.Unit) {
		if s := stream(); s != nil {
			if err := s.WriteUnit(pub, u); err != nil {
				s.DropPublisher(pub, err.Error())
			}
		}
	}
	for _, t := range r.Tracks() {
		i := len(tracks)
		switch c := t.Codec.(type) {
		case *codecs.H264:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h264", SPS: c.SPS, PPS: c.PPS})
			r.OnDataH264(t, func(pts, dts time.Duration, au [][]byte) {
				if s := stream(); s != nil {
					if err := s.WriteH264(pub, i, pts, dts, au); err != nil {
						s.DropPublisher(pub, err.Error())
					}
				}
			})
		case *codecs.H265:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h265"})
			r.OnDataH265(t, func(pts, dts time.Duration, au [][]byte) {
				unit(&core.Unit{Track: i, PTS: pts, DTS: dts, AU: au})
			})
		case *codecs.MPEG4Audio:
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "aac", AAC: c.Config})
			r.OnDataMPEG4Audio(t, func(pts time.Duration, au []byte) {
				unit(&core.Unit{Track: i, PTS: pts, DTS: pts, AU: [][]byte{au}})
			})
		case *codecs.Opus:
			ch := 2
			if c.IDHeader != nil && c.IDHeader.ChannelCount > 0 {
				ch = int(c.IDHeader.ChannelCount)
			}
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "opus", Channels: ch})
			r.OnDataOpus(t, func(pts time.Duration, pkt []byte) {
				if s := stream(); s != nil {
					s.WriteOpus(pub, i, pts, pkt)
				}
			})
		default:
			return nil, fmt.Errorf("codec %T is not accepted (H.264 or HEVC, AAC or Opus)", t.Codec)
		}
	}
	return tracks, nil
}

// boundedConn counts what the encoder sends: the stream's measured bitrate, and the edge's one
// input bound (core.RateBound, as for SRT).
type boundedConn struct {
	net.Conn
	bound  core.RateBound
	mu     sync.Mutex
	stream *core.Stream
	pub    *core.Publisher
	over   string
	early  string // past the bound before the publisher was published (while its tracks were read)
}

func (b *boundedConn) Read(p []byte) (int, error) {
	n, err := b.Conn.Read(p)
	if n > 0 {
		b.mu.Lock()
		stream, pub := b.stream, b.pub
		b.mu.Unlock()
		if stream != nil {
			stream.RecordBytes(n)
		}
		if why := b.bound.Add(n, time.Now()); why != "" {
			if stream == nil {
				// Not published yet (the key was checked, its tracks are being read): dropped as
				// soon as it is, so the disconnect carries the reason.
				b.mu.Lock()
				if b.early == "" {
					b.early = "input out of bounds: " + why
				}
				b.mu.Unlock()
				return n, err
			}
			b.over = "input out of bounds: " + why
			stream.DropPublisher(pub, b.over)
			return 0, errors.New(b.over)
		}
	}
	return n, err
}
