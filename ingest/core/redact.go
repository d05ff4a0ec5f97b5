package core

import (
	"io"
	"regexp"
)

// streamKeyRE matches a stream key (lsk + 32 hex, or any longer run of key characters after lsk)
// wherever it appears: in a URL (rtmp://…/whip/lsk…, srt streamid=…), an ffmpeg error, a path.
var streamKeyRE = regexp.MustCompile(`lsk[A-Za-z0-9_-]{4,}`)

// RedactKeys keeps the first 6 characters of every stream key in s (SPEC §22: no key in full in
// any log line) — `lsk3f9…`.
func RedactKeys(s string) string {
	return streamKeyRE.ReplaceAllStringFunc(s, func(k string) string { return k[:6] + "…" })
}

type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := r.w.Write([]byte(RedactKeys(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// RedactingWriter is w with RedactKeys applied to every write: the edge's log output (main sets
// it under the standard logger, so every package's log line, ffmpeg's stderr quoted in it too, is covered).
func RedactingWriter(w io.Writer) io.Writer { return redactingWriter{w} }
