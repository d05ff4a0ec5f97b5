// Package feed is the broadcast as the service's live worker reads it (SPEC §22 "One live hub"):
// GET /feed/{live_stream_id} on the internal HTTP API answers a live MPEG-TS, chunked, of the
// publisher's units from the stream core (core.Subscribe) — whatever protocol it arrived by
// (RTMP, SRT, WHIP) — starting at the last keyframe. The session's ffmpeg (activities/live/
// session.ts) reads it with the service's credential; it ends when the publisher does.
package feed

import (
	"bufio"
	"errors"
	"net/http"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"
	tscodecs "github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts/codecs"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// WaitReady is how long a request waits for a publisher with a keyframe (the workflow starts the
// session as the publisher connects: its first keyframe may be a moment behind).
var WaitReady = 10 * time.Second

// offset keeps timestamps positive (a source's first DTS may be below its PTS).
const offset = 90000

// Routes are the feed's routes on the internal HTTP API.
func Routes(reg *core.Registry) []httpapi.Route {
	return []httpapi.Route{{Pattern: "GET /feed/{id}", Handler: func(w http.ResponseWriter, r *http.Request) { serve(reg, w, r) }}}
}

func serve(reg *core.Registry, w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var stream *core.Stream
	var sub *core.Subscription
	deadline := time.Now().Add(WaitReady)
	for {
		if stream = reg.Get(id); stream != nil {
			var err error
			if sub, err = stream.Subscribe(); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			httpapi.Error(w, http.StatusNotFound, "no_feed", "no publisher with a keyframe on this stream")
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer stream.Unsubscribe(sub)

	tracks := map[int]*mpegts.Track{}
	var list []*mpegts.Track
	for i, t := range sub.Tracks {
		var c tscodecs.Codec
		switch {
		case t.Codec == "h264":
			c = &tscodecs.H264{}
		case t.Codec == "h265":
			c = &tscodecs.H265{}
		case t.Codec == "aac" && t.AAC != nil:
			c = &tscodecs.MPEG4Audio{Config: *t.AAC}
		case t.Codec == "opus":
			ch := t.Channels
			if ch < 1 {
				ch = 2
			}
			c = &tscodecs.Opus{ChannelCount: ch} //nolint:staticcheck // Desc needs the OpusHead's mapping, unknown here
		default:
			continue
		}
		tt := &mpegts.Track{Codec: c}
		tracks[i] = tt
		list = append(list, tt)
	}
	if len(list) == 0 {
		httpapi.Error(w, http.StatusNotFound, "no_feed", "the publisher has no track the feed can carry")
		return
	}
	w.Header().Set("Content-Type", "video/mp2t")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	bw := bufio.NewWriterSize(w, 64*1024)
	mw := &mpegts.Writer{W: bw, Tracks: list}
	if mw.Initialize() != nil {
		return
	}
	ctx := r.Context()
	for {
		var u *core.Unit
		var ok bool
		select {
		case <-ctx.Done():
			return
		case u, ok = <-sub.Units():
		}
		if !ok {
			_ = bw.Flush()
			return
		}
		if err := write(mw, tracks[u.Track], sub.Tracks[u.Track].Codec, u); err != nil {
			return
		}
		// Each unit goes out as it is muxed: the ladder's latency is the publisher's.
		if len(sub.Units()) == 0 {
			if bw.Flush() != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

var errSkip = errors.New("skipped")

func write(mw *mpegts.Writer, t *mpegts.Track, codec string, u *core.Unit) error {
	if t == nil || len(u.AU) == 0 {
		return nil
	}
	pts := int64(u.PTS)*90000/int64(time.Second) + offset
	dts := int64(u.DTS)*90000/int64(time.Second) + offset
	var err error
	switch codec {
	case "h264":
		err = mw.WriteH264(t, pts, dts, u.AU)
	case "h265":
		err = mw.WriteH265(t, pts, dts, u.AU)
	case "aac":
		err = mw.WriteMPEG4Audio(t, pts, u.AU)
	case "opus":
		err = mw.WriteOpus(t, pts, u.AU)
	default:
		err = errSkip
	}
	if errors.Is(err, errSkip) {
		return nil
	}
	return err
}
