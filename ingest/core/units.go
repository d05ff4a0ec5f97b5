package core

import (
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
)

// rtpMTU is the payload size of the RTP packets made from access units (WebRTC-safe).
const rtpMTU = 1200

// packetizer turns one track's access units into RTP packets, as a WHIP publisher's arrive: the
// readers of an RTMP or SRT publisher see the same thing.
type packetizer struct {
	payloader codecs.H264Payloader
	ssrc      uint32
	seq       uint16
	sps, pps  []byte // the last parameter sets seen, sent before a keyframe that lacks them
}

func newPacketizer() *packetizer {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &packetizer{ssrc: binary.BigEndian.Uint32(b[:4]), seq: binary.BigEndian.Uint16(b[4:])}
}

// h264 is au (NAL units without start codes) as RTP packets at timestamp pts (90 kHz clock).
func (p *packetizer) h264(pts time.Duration, au [][]byte) []*rtp.Packet {
	hasParams, idr := false, false
	for _, n := range au {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			p.sps, hasParams = append([]byte(nil), n...), true
		case h264.NALUTypePPS:
			p.pps = append([]byte(nil), n...)
		case h264.NALUTypeIDR:
			idr = true
		}
	}
	if idr && !hasParams && p.sps != nil && p.pps != nil {
		au = append([][]byte{p.sps, p.pps}, au...)
	}
	annexB, err := h264.AnnexB(au).Marshal()
	if err != nil {
		return nil
	}
	payloads := p.payloader.Payload(rtpMTU, annexB)
	ts := uint32(int64(pts) * 90000 / int64(time.Second))
	pkts := make([]*rtp.Packet, len(payloads))
	for i, pl := range payloads {
		pkts[i] = &rtp.Packet{
			Header:  rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: p.seq, Timestamp: ts, SSRC: p.ssrc, Marker: i == len(payloads)-1},
			Payload: pl,
		}
		p.seq++
	}
	return pkts
}

// WriteH264 hands one access unit of p's H.264 track to the stream (RTMP, SRT): it is measured
// and packetized into RTP for the readers, in decode order with pts as the RTP timestamp. A
// unit whose pts differs from its dts marks the source as reordering (B-frames), which WebRTC
// viewers cannot be given as is. The unit goes to the feed's readers too (WriteUnit): past the
// input bounds it is not, and the error says why.
func (s *Stream) WriteH264(p *Publisher, track int, pts, dts time.Duration, au [][]byte) error {
	s.RecordVideoFrame(au)
	u := &Unit{Track: track, PTS: pts, DTS: dts, AU: au}
	if err := s.WriteUnit(p, u); err != nil {
		return err
	}
	au = u.AU // with the parameter sets before a keyframe
	s.mu.Lock()
	if s.pub != p {
		s.mu.Unlock()
		return nil
	}
	if pts != dts {
		s.reordered = true
	}
	pk := p.packetizer(track)
	pkts := pk.h264(pts, au)
	s.mu.Unlock()
	for _, pkt := range pkts {
		s.WritePacket(track, pkt)
	}
	return nil
}

// Reordered says whether the publisher's video has B-frames (decode order is not display order).
func (s *Stream) Reordered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reordered
}

// WriteOpus hands one Opus packet of p's track to the stream as one RTP packet (48 kHz clock).
func (s *Stream) WriteOpus(p *Publisher, track int, pts time.Duration, pkt []byte) {
	_ = s.WriteUnit(p, &Unit{Track: track, PTS: pts, DTS: pts, AU: [][]byte{pkt}})
	s.mu.Lock()
	if s.pub != p {
		s.mu.Unlock()
		return
	}
	pk := p.packetizer(track)
	out := &rtp.Packet{
		Header:  rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: pk.seq, Timestamp: uint32(int64(pts) * 48000 / int64(time.Second)), SSRC: pk.ssrc, Marker: true},
		Payload: pkt,
	}
	pk.seq++
	s.mu.Unlock()
	s.WritePacket(track, out)
}

// packetizer is the RTP packetizer of p's track, made on its first unit (callers hold s.mu).
func (p *Publisher) packetizer(track int) *packetizer {
	if p.packetizers == nil {
		p.packetizers = map[int]*packetizer{}
	}
	pk := p.packetizers[track]
	if pk == nil {
		pk = newPacketizer()
		p.packetizers[track] = pk
	}
	return pk
}
