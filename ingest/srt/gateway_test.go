package srt

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	srt "github.com/datarhei/gosrt"

	"github.com/vidhost/vidhost/ingest/config"
)

// fakeConn serves Read from a script; the rest of srt.Conn is never called by copyBounded.
type fakeConn struct {
	srt.Conn
	chunks int // how many full reads before EOF (-1: endless)
	closed bool
}

func (f *fakeConn) Read(p []byte) (int, error) {
	if f.closed {
		return 0, io.ErrClosedPipe
	}
	if f.chunks == 0 {
		return 0, io.EOF
	}
	if f.chunks > 0 {
		f.chunks--
	}
	for i := range p {
		p[i] = 0x47
	}
	return len(p), nil
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

func TestCopyBoundedCopiesUntilTheCallerLeaves(t *testing.T) {
	g := &Server{cfg: config.Config{MaxBitsPerSecond: 30_000_000, RateWindow: time.Hour}}
	var out bytes.Buffer
	why := g.copyBounded(&fakeConn{chunks: 3}, &out, nil)
	if why != "caller disconnected" || out.Len() != 3*64*1024 {
		t.Fatalf("got %q after %d bytes", why, out.Len())
	}
}

func TestCopyBoundedDropsAFloodingCaller(t *testing.T) {
	// An endless caller, read as fast as memory copies: far over 30 Mb/s in any window.
	g := &Server{cfg: config.Config{MaxBitsPerSecond: 30_000_000, RateWindow: 10 * time.Millisecond}}
	conn := &fakeConn{chunks: -1}
	why := g.copyBounded(conn, io.Discard, nil)
	if !strings.HasPrefix(why, "input out of bounds: ") || !strings.HasSuffix(why, " Mb/s is over 30 Mb/s") || !conn.closed {
		t.Fatalf("got %q, closed %v", why, conn.closed)
	}
}

func TestRejectionCodes(t *testing.T) {
	for code, want := range map[string]srt.RejectionReason{
		"unknown": srt.REJX_UNAUTHORIZED, "bad_key": srt.REJX_UNAUTHORIZED, "disabled": srt.REJX_FORBIDDEN,
		"busy": srt.REJX_CONFLICT, "plan_limit": srt.REJX_OVERLOAD, "anything else": srt.REJX_FORBIDDEN,
	} {
		if got := rejection(code); got != want {
			t.Errorf("rejection(%q) = %d, want %d", code, got, want)
		}
	}
}
