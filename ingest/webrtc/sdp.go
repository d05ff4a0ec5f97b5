package webrtc

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pion/sdp/v3"
)

// offerError is an offer refused with 400 and a stable code.
type offerError struct{ code, message string }

func (e *offerError) Error() string { return e.message }

// checkOffer parses an offer and checks what the edge can take before any WebRTC state exists:
// a bounded number of ICE candidates, and (publish) H.264 video with Opus or no audio, or
// (play) at least one video or audio section.
func checkOffer(raw string, publish bool) error {
	if n := strings.Count(raw, "a=candidate:"); n > maxCandidates {
		return &offerError{"too_many_candidates", fmt.Sprintf("the offer carries %d ICE candidates (at most %d)", n, maxCandidates)}
	}
	var d sdp.SessionDescription
	if err := d.UnmarshalString(raw); err != nil {
		return &offerError{"bad_sdp", fmt.Sprintf("the SDP offer is malformed: %v", err)}
	}
	var video, audio, h264, opus, vp8 bool
	for _, m := range d.MediaDescriptions {
		if m.MediaName.Port.Value == 0 {
			continue // rejected/disabled section
		}
		codecs := map[string]bool{}
		for _, a := range m.Attributes {
			if a.Key == "rtpmap" {
				if _, rest, ok := strings.Cut(a.Value, " "); ok {
					name, _, _ := strings.Cut(rest, "/")
					codecs[strings.ToLower(name)] = true
				}
			}
		}
		switch m.MediaName.Media {
		case "video":
			video = true
			h264 = h264 || codecs["h264"]
			vp8 = vp8 || codecs["vp8"]
		case "audio":
			audio = true
			opus = opus || codecs["opus"]
		}
	}
	if !video && !audio {
		return &offerError{"no_media", "the offer has no audio or video section"}
	}
	if !publish {
		return nil
	}
	if !video {
		return &offerError{"no_video", "a WHIP publisher must send video (H.264)"}
	}
	if !h264 {
		if vp8 {
			return &offerError{"unsupported_codec", "VP8 is not accepted: send H.264 (and Opus)"}
		}
		return &offerError{"unsupported_codec", "the video must be H.264"}
	}
	if audio && !opus {
		return &offerError{"unsupported_codec", "the audio must be Opus"}
	}
	return nil
}

// dropPrivateCandidates removes the offer's ICE candidates the edge must not send connectivity
// checks to (SPEC §22 abuse bounds): loopback, link-local, private (RFC 1918, ULA), unspecified
// and multicast addresses, and names (mDNS `.local` or any other: the edge resolves none).
// Without this an offer could aim the edge's STUN at 64 of the machine's own ports (red team:
// 192 packets in 10 s). A peer whose only candidates are dropped still connects: its own checks
// reach the edge and are answered (a peer-reflexive candidate). It returns how many it dropped.
func dropPrivateCandidates(raw string) (string, int) {
	lines := strings.SplitAfter(raw, "\n")
	out := make([]string, 0, len(lines))
	dropped := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "a=candidate:") && !publicCandidate(l) {
			dropped++
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, ""), dropped
}

// publicCandidate: an a=candidate line (RFC 8839: foundation component transport priority
// address port typ …) whose address is a public unicast IP.
func publicCandidate(line string) bool {
	f := strings.Fields(strings.TrimPrefix(line, "a=candidate:"))
	if len(f) < 6 {
		return false
	}
	ip, err := netip.ParseAddr(f[4])
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast())
}
