package srt

import (
	"io"
	"sync"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"

	"github.com/vidhost/vidhost/ingest/core"
)

// meter measures an SRT caller's MPEG-TS for the stream core (GET /streams): bytes, tracks,
// H.264 frames. It reads a copy of the feed in its own goroutine; it never fails the copy (a
// feed it cannot parse is still counted and forwarded).
type meter struct {
	reg    *core.Registry
	stream *core.Stream
	pub    *core.Publisher
	pr     *io.PipeReader
	pw     *io.PipeWriter
	done   chan struct{}
	once   sync.Once
}

func newMeter(reg *core.Registry, liveStreamID string) *meter {
	m := &meter{reg: reg, stream: reg.Acquire(liveStreamID), pub: &core.Publisher{Protocol: "srt"}, done: make(chan struct{})}
	m.stream.Publish(m.pub)
	m.pr, m.pw = io.Pipe()
	go m.parse()
	return m
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
	var tracks []core.Track
	for _, t := range r.Tracks() {
		switch t.Codec.(type) {
		case *mpegts.CodecH264:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h264"})
			r.OnDataH264(t, func(_, _ int64, au [][]byte) error {
				m.stream.RecordVideoFrame(au)
				return nil
			})
		case *mpegts.CodecH265:
			tracks = append(tracks, core.Track{Kind: "video", Codec: "h265"})
		case *mpegts.CodecMPEG4Audio:
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "aac"})
		case *mpegts.CodecOpus:
			tracks = append(tracks, core.Track{Kind: "audio", Codec: "opus"})
		}
	}
	m.stream.SetTracks(m.pub, tracks)
	r.OnDecodeError(func(error) {})
	for r.Read() == nil {
	}
}

func (m *meter) close() {
	m.once.Do(func() {
		m.pw.Close()
		<-m.done
		m.stream.Unpublish(m.pub)
		m.reg.Release(m.stream.ID)
	})
}
