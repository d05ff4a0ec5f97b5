package webrtc

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	pion "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/samplebuilder"

	"github.com/vidhost/vidhost/ingest/config"
	"github.com/vidhost/vidhost/ingest/core"
)

// republishArgs: ffmpeg reads MPEG-TS (H.264 + Opus) on stdin (only the pipe protocol and the
// mpegts demuxer are allowed for it), copies the video, encodes the audio to AAC and publishes
// onto the media server as RTMP under the `whip` app.
func republishArgs(mediaURL, key string, audio bool) []string {
	args := []string{
		"-hide_banner", "-loglevel", "error", "-nostdin",
		"-protocol_whitelist", "pipe,rtmp,tcp", "-format_whitelist", "mpegts",
		"-f", "mpegts", "-analyzeduration", "1000000", "-probesize", "1000000", "-fflags", "+nobuffer", "-i", "pipe:0",
		"-map", "0:v:0", "-c:v", "copy",
	}
	if audio {
		args = append(args, "-map", "0:a:0", "-c:a", "aac", "-b:a", "128k", "-ar", "48000")
	}
	// -flush_packets 1: each FLV tag goes out as it is muxed, not when 32 KB have gathered
	// (seconds, at a webcam's bitrate).
	return append(args, "-flush_packets", "1", "-f", "flv", mediaURL+"/whip/"+key)
}

// republisher turns the publisher's RTP into MPEG-TS on ffmpeg's stdin.
type republisher struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan string
	waited chan struct{} // closed once ffmpeg has exited

	mu      sync.Mutex
	bw      *bufio.Writer
	w       *mpegts.Writer
	tsTrack map[int]*mpegts.Track
	builder map[int]*samplebuilder.SampleBuilder
	clock   map[int]*clock
	t0      time.Time
	started bool // a keyframe was written: the feed starts there
	lastKey time.Time
	failed  error
	stopped bool
}

// clock unwraps one track's 32-bit RTP timestamps into 90 kHz PTS from the republisher's start.
type clock struct {
	rate   int64
	prev   uint32
	ext    int64
	offset int64 // 90 kHz: when the track's first packet came, after t0
	init   bool
}

func (c *clock) pts(ts uint32, now, t0 time.Time) int64 {
	if !c.init {
		c.init, c.prev = true, ts
		c.offset = int64(now.Sub(t0)) * 90000 / int64(time.Second)
	}
	c.ext += int64(int32(ts - c.prev))
	c.prev = ts
	return c.offset + c.ext*90000/c.rate
}

func startRepublisher(cfg config.Config, key string, tracks []*pion.TrackRemote) (*republisher, error) {
	r := &republisher{exited: make(chan string, 1), waited: make(chan struct{}), tsTrack: map[int]*mpegts.Track{}, builder: map[int]*samplebuilder.SampleBuilder{}, clock: map[int]*clock{}, t0: time.Now()}
	var tsTracks []*mpegts.Track
	audio := false
	for i, t := range tracks {
		var tt *mpegts.Track
		if t.Kind() == pion.RTPCodecTypeVideo {
			tt = &mpegts.Track{Codec: &mpegts.CodecH264{}}
			r.builder[i] = samplebuilder.New(256, &codecs.H264Packet{}, 90000, samplebuilder.WithMaxTimeDelay(time.Second))
			r.clock[i] = &clock{rate: 90000}
		} else {
			if audio {
				continue
			}
			audio = true
			ch := int(t.Codec().Channels)
			if ch < 1 {
				ch = 2
			}
			tt = &mpegts.Track{Codec: &mpegts.CodecOpus{ChannelCount: ch}}
			r.clock[i] = &clock{rate: 48000}
		}
		r.tsTrack[i] = tt
		tsTracks = append(tsTracks, tt)
	}
	r.cmd = exec.Command(cfg.FFmpeg, republishArgs(cfg.MediaURL, key, audio)...)
	stdin, err := r.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r.stdin = stdin
	var stderr strings.Builder
	r.cmd.Stderr = &core.LimitedWriter{W: &stderr, N: 2048}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ffmpeg: %v", err)
	}
	go func() {
		err := r.cmd.Wait()
		r.exited <- fmt.Sprintf("%v %s", err, strings.TrimSpace(stderr.String()))
		close(r.waited)
	}()
	r.bw = bufio.NewWriterSize(stdin, 64*1024)
	r.w = &mpegts.Writer{W: r.bw, Tracks: tsTracks}
	if err := r.w.Initialize(); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// writeVideo pushes one H.264 RTP packet; it returns each access unit completed (for the stats).
func (r *republisher) writeVideo(i int, pkt *rtp.Packet) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.builder[i]
	if b == nil || r.failed != nil || r.stopped {
		return nil
	}
	b.Push(pkt)
	var last [][]byte
	for {
		smp := b.Pop()
		if smp == nil {
			return last
		}
		var au h264.AnnexB
		if err := au.Unmarshal(smp.Data); err != nil || len(au) == 0 {
			continue
		}
		last = au
		if h264.IsRandomAccess(au) {
			r.lastKey = time.Now()
		}
		if !r.started {
			if !h264.IsRandomAccess(au) {
				continue
			}
			r.started = true
		}
		pts := r.clock[i].pts(smp.PacketTimestamp, time.Now(), r.t0)
		if err := r.w.WriteH264(r.tsTrack[i], pts, pts, au); err != nil {
			r.failed = err
			return last
		}
		if err := r.bw.Flush(); err != nil {
			r.failed = err
		}
	}
}

// lastKeyframe is when the last keyframe went out (zero before the first).
func (r *republisher) lastKeyframe() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastKey
}

// sinceKeyframe is how long ago the last keyframe went out (since the start before the first).
func (r *republisher) sinceKeyframe() time.Duration {
	if k := r.lastKeyframe(); !k.IsZero() {
		return time.Since(k)
	}
	return time.Since(r.t0) // set once, before any reader
}

// writeAudio pushes one Opus RTP packet (one Opus packet per RTP packet).
func (r *republisher) writeAudio(i int, pkt *rtp.Packet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tt := r.tsTrack[i]
	if tt == nil || r.failed != nil || r.stopped || len(pkt.Payload) == 0 {
		return
	}
	pts := r.clock[i].pts(pkt.Timestamp, time.Now(), r.t0)
	if !r.started {
		return
	}
	if err := r.w.WriteOpus(tt, pts, [][]byte{pkt.Payload}); err != nil {
		r.failed = err
	}
}

// stop ends ffmpeg's input, lets it flush briefly, then makes sure it ends.
func (r *republisher) stop() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	_ = r.bw.Flush()
	r.mu.Unlock()
	_ = r.stdin.Close()
	go func() {
		select {
		case <-r.waited:
		case <-time.After(5 * time.Second):
			_ = r.cmd.Process.Kill()
		}
	}()
}
