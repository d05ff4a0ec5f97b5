package core

import "io"

// LimitedWriter keeps the first N bytes written to it in W and drops the rest, never failing:
// the republishers' ffmpeg stderr goes through it, so a chatty ffmpeg cannot grow the log buffer.
type LimitedWriter struct {
	W io.Writer
	N int
}

func (l *LimitedWriter) Write(p []byte) (int, error) {
	if l.N > 0 {
		k := min(len(p), l.N)
		_, _ = l.W.Write(p[:k])
		l.N -= k
	}
	return len(p), nil
}
