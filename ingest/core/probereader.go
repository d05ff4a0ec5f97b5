package core

import (
	"errors"
	"io"
)

// ProbeReader reads an MPEG-TS ingest's body (the LL-HLS rungs', the WebRTC rendition's): it
// fails past N bytes while the program is sought (a body that is not MPEG-TS cannot be read
// forever), and is unbounded once the caller sets N < 0 (a live feed).
type ProbeReader struct {
	R io.Reader
	N int64
}

func (l *ProbeReader) Read(p []byte) (int, error) {
	if l.N == 0 {
		return 0, errors.New("no MPEG-TS program within the first 4 MB")
	}
	if l.N > 0 && int64(len(p)) > l.N {
		p = p[:l.N]
	}
	k, err := l.R.Read(p)
	if l.N > 0 {
		l.N -= int64(k)
	}
	return k, err
}
