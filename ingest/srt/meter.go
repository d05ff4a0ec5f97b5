package srt

import (
	"io"
	"sync"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"

	"github.com/vidhost/vidhost/ingest/core"
)

// meter publishes an SRT caller's MPEG-TS into the stream core: bytes, tracks, and its access
// units (measured, packetized for WHEP viewers, and the feed's units). It reads a copy of the
// caller's data in its own goroutine; a unit past the input bounds drops the caller (closeConn).
type meter struct {
	reg    *core.Registry
	stream *core.Stream
	pub    *core.Publisher
	pr     *io.PipeReader
	pw     *io.PipeWriter
	done   chan struct{}
	once   sync.Once

	mu  sync.Mutex
	why string // why the edge dropped the caller
}

func newMeter(reg *core.Registry, liveStreamID string, closeConn func()) *meter {
	m := &meter{reg: reg, stream: reg.Acquire(liveStreamID), done: make(chan struct{})}
	m.pub = &core.Publisher{Protocol: "srt", Close: closeConn}
	m.stream.Publish(m.pub)
	m.pr, m.pw = io.Pipe()
	go m.parse()
	return m
}

// drop ends the caller for why (the input bounds).
func (m *meter) drop(why string) {
	m.mu.Lock()
	if m.why == "" {
		m.why = why
	}
	m.mu.Unlock()
	m.stream.DropPublisher(m.pub, why)
}

func (m *meter) dropped() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.why
}

// Write counts p and hands it to the parser (which always drains, so this never blocks for long).
func (m *meter) Write(p []byte) (int, error) {
	m.stream.RecordBytes(len(p))
	_, _ = m.pw.Write(p)
	return len(p), nil
}

func (m *meter) parse() {
	defer close(m.done)
	defer io.Copy(io.Discard, m.pr) //nolint:errcheck // keep draining whatever happens
	r := &mpegts.Reader{R: m.pr}
	if err := r.Initialize(); err != nil {
		return
	}
	unit := func(u *core.Unit) {
		if err := m.stream.WriteUnit(m.pub, u); err != nil {
			m.drop(err.Error())
		}
	}
	var tracks []core.Track
	for _, t := range r.Tracks() {
		i := len(tracks)
		switch c := t.Codec.(type) {
		case *mpegts.CodecH264:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h264"})
			// Into the core as RTP (WHEP viewers of an SRT broadcast) and as the feed's units.
			r.OnDataH264(t, func(pts, dts int64, au [][]byte) error {
				if err := m.stream.WriteH264(m.pub, i, ticks(pts), ticks(dts), au); err != nil {
					m.drop(err.Error())
				}
				return nil
			})
		case *mpegts.CodecH265:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h265"})
			r.OnDataH265(t, func(pts, dts int64, au [][]byte) error {
				unit(&core.Unit{Track: i, PTS: ticks(pts), DTS: ticks(dts), AU: au})
				return nil
			})
		case *mpegts.CodecMPEG4Audio:
			conf := c.Config
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "aac", AAC: &conf})
			r.OnDataMPEG4Audio(t, func(pts int64, aus [][]byte) error {
				unit(&core.Unit{Track: i, PTS: ticks(pts), DTS: ticks(pts), AU: aus})
				return nil
			})
		case *mpegts.CodecOpus:
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "opus", Channels: c.ChannelCount}) //nolint:staticcheck
			r.OnDataOpus(t, func(pts int64, packets [][]byte) error {
				unit(&core.Unit{Track: i, PTS: ticks(pts), DTS: ticks(pts), AU: packets})
				return nil
			})
		default:
			continue
		}
	}
	m.stream.SetTracks(m.pub, tracks)
	r.OnDecodeError(func(error) {})
	for r.Read() == nil {
	}
}

// ticks is a 90 kHz MPEG-TS timestamp as a duration.
func ticks(t int64) time.Duration { return time.Duration(t) * time.Second / 90000 }

func (m *meter) close() {
	m.once.Do(func() {
		m.pw.Close()
		<-m.done
		m.stream.Unpublish(m.pub)
		m.reg.Release(m.stream.ID)
	})
}
