package srt

import (
	"errors"
	"net/url"
	"strings"

	"github.com/vidhost/vidhost/ingest/keycheck"
)

var (
	errBadStreamID = errors.New("the streamid is not a stream key")
	errNotPublish  = errors.New("only publishing (m=publish) is served")
)

// streamKey reads the stream key from an SRT streamid: the key as it is, or the SRT access
// control form "#!::r=<key>,m=publish" (keys in any order; m may be left out; other keys ignored).
// Some encoders pass the streamid of their URL on still percent-encoded (Debian's ffmpeg 7 does):
// it is decoded first.
func streamKey(streamID string) (string, error) {
	if strings.Contains(streamID, "%") {
		if dec, err := url.QueryUnescape(streamID); err == nil {
			streamID = dec
		}
	}
	if rest, ok := strings.CutPrefix(streamID, "#!::"); ok {
		var key, mode string
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "r":
				key = v
			case "m":
				mode = v
			}
		}
		if mode != "" && mode != "publish" {
			return "", errNotPublish
		}
		streamID = key
	}
	if !keycheck.IsStreamKey(streamID) {
		return "", errBadStreamID
	}
	return streamID, nil
}
