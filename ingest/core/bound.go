package core

import (
	"fmt"
	"time"
)

// RateBound is the edge's one input bound (SPEC §17): a publisher whose input averages more than
// Max bits per second over Window is dropped, whatever protocol it arrived by. The window's
// budget (Max × Window) is checked as bytes arrive: a feed that sent more within the window
// averages over the bound whatever follows, and is dropped at once (80 Mb/s is dropped in ~2.5 s).
type RateBound struct {
	Max    int64
	Window time.Duration

	start time.Time
	bytes int64
}

// Add counts n bytes that arrived at now; it says why the input is over the bound ("" within it),
// in the stable form "<n> Mb/s is over <max> Mb/s".
func (b *RateBound) Add(n int, now time.Time) string {
	if b.start.IsZero() || now.Sub(b.start) >= b.Window {
		b.start, b.bytes = now, 0
	}
	b.bytes += int64(n)
	if float64(b.bytes*8) <= float64(b.Max)*b.Window.Seconds() {
		return ""
	}
	el := max(now.Sub(b.start), time.Second)
	bps := b.bytes * 8 * int64(time.Second) / int64(el)
	return fmt.Sprintf("%d Mb/s is over %s Mb/s", (bps+500_000)/1_000_000, mbps(b.Max))
}

func mbps(bps int64) string {
	if bps%1_000_000 == 0 {
		return fmt.Sprint(bps / 1_000_000)
	}
	return fmt.Sprintf("%.2f", float64(bps)/1e6)
}
