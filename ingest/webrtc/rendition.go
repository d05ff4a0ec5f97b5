package webrtc

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/opus"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"

	"github.com/vidhost/vidhost/ingest/core"
	"github.com/vidhost/vidhost/ingest/httpapi"
)

// The WebRTC rendition (SPEC §22 "Every broadcast plays over WHEP", §24): when WHEP viewers
// cannot be given the source's own packets — a watermarked stream, a source with B-frames or a
// codec WebRTC cannot carry, AAC audio (RTMP, SRT) — the live worker's ffmpeg encodes one more
// output for them (H.264 without B-frames, 1 s keyframes, Opus) and PUTs it here as MPEG-TS, as
// it PUTs LL-HLS renditions to ingest/hls. It is published into a core stream of its own
// (core.RenditionID), and WHEP serves that stream instead of the source (whepSource).

// maxRenditionProbe bounds what is read before the MPEG-TS's tracks are known.
const maxRenditionProbe = 4 << 20

var streamIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// errRenditionPending: WHEP must be served from the rendition and it has not started yet.
var errRenditionPending = errors.New("the broadcast's WebRTC rendition is starting")

// whepSource is the core stream a WHEP viewer of liveStreamID reads: the rendition when one is
// being ingested; else the source, unless the source cannot be sent as is (B-frames, a video
// codec other than H.264, audio other than Opus: a viewer given the source's video alone would
// stay silent for its whole session, as a viewer never moves to the rendition once it starts)
// or the service said the rendition is required (a watermarked stream: `rendition` "required"),
// which are errRenditionPending until the rendition starts. `rendition` "off" (the service makes
// none, LIVE_WEBRTC_RENDITION=off): the source's carried tracks, its AAC left out.
func (s *Server) whepSource(liveStreamID string, rendition string) (string, error) {
	if st := s.reg.Get(core.RenditionID(liveStreamID)); st != nil && webrtcVideo(st.Tracks()) {
		return core.RenditionID(liveStreamID), nil
	}
	if rendition == "required" {
		return "", errRenditionPending
	}
	if st := s.reg.Get(liveStreamID); st != nil {
		tracks := st.Tracks()
		if st.Reordered() || (!webrtcVideo(tracks) && hasVideo(tracks)) || (rendition != "off" && uncarriedAudio(tracks)) {
			return "", errRenditionPending
		}
	}
	return liveStreamID, nil
}

// uncarriedAudio: an audio track WebRTC cannot carry (an RTMP or SRT source's AAC).
func uncarriedAudio(tracks []core.Track) bool {
	for _, t := range tracks {
		if t.Kind == "audio" && !carried(t) {
			return true
		}
	}
	return false
}

func hasVideo(tracks []core.Track) bool {
	for _, t := range tracks {
		if t.Kind == "video" {
			return true
		}
	}
	return false
}

// handleRenditionIngest reads the rendition's MPEG-TS until its body ends (ffmpeg stopped) and
// publishes it into the rendition's core stream; a second PUT while one feeds it is refused (409).
// Its end drops the viewers reading it (they reconnect to whatever serves the stream then).
func (s *Server) handleRenditionIngest(w http.ResponseWriter, r *http.Request) {
	ls := r.PathValue("ls")
	if !streamIDRE.MatchString(ls) {
		httpapi.Error(w, http.StatusBadRequest, "bad_name", "the stream id must be 1-64 of [A-Za-z0-9_-]")
		return
	}
	probe := &core.ProbeReader{R: r.Body, N: maxRenditionProbe}
	reader := &mpegts.Reader{R: probe}
	if err := reader.Initialize(); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "bad_mpegts", fmt.Sprintf("the body is not MPEG-TS with a program (%v)", err))
		return
	}
	pub := &core.Publisher{Protocol: "rendition"}
	td := mpegts.NewTimeDecoder()
	ticks := func(t int64) time.Duration { return time.Duration(td.Decode(t)) * time.Second / 90000 }
	id := core.RenditionID(ls)
	stream := s.reg.Acquire(id)
	defer s.reg.Release(id)
	for _, t := range reader.Tracks() {
		i := len(pub.Tracks)
		switch t.Codec.(type) {
		case *mpegts.CodecH264:
			pub.Tracks = append(pub.Tracks, core.Track{Kind: "video", Codec: "h264"})
			reader.OnDataH264(t, func(pts, dts int64, au [][]byte) error {
				stream.WriteH264(pub, i, ticks(pts), ticks(dts), au)
				return nil
			})
		case *mpegts.CodecOpus:
			pub.Tracks = append(pub.Tracks, core.Track{Kind: "audio", Codec: "opus"})
			reader.OnDataOpus(t, func(pts int64, packets [][]byte) error {
				at := ticks(pts)
				for _, p := range packets { // one PES may hold several packets, each its own RTP packet
					stream.WriteOpus(pub, i, at, p)
					at += opus.PacketDuration(p)
				}
				return nil
			})
		}
	}
	if !webrtcVideo(pub.Tracks) {
		httpapi.Error(w, http.StatusBadRequest, "no_usable_tracks", "the MPEG-TS has no H.264 track")
		return
	}
	if !stream.TryPublish(pub) {
		httpapi.Error(w, http.StatusConflict, "ingest_busy", "another ingest feeds this stream's WebRTC rendition")
		return
	}
	reader.OnDecodeError(func(error) {})
	logf("rendition %s: ingest started (%d tracks)", ls, len(pub.Tracks))
	probe.N = -1 // unbounded from now on: a live feed
	why := "ingest ended"
	for {
		if err := reader.Read(); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				why = err.Error()
			}
			break
		}
	}
	for _, rd := range stream.Unpublish(pub) {
		if v, ok := rd.(*viewer); ok {
			go v.close("the WebRTC rendition ended")
		}
	}
	logf("rendition %s: %s", ls, why)
	w.WriteHeader(http.StatusNoContent)
}
