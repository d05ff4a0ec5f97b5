// Package layout holds the edge's shape as a test (STYLE.md "The live edge"): no protocol
// package imports another protocol's package; they meet only in ingest/core.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/vidhost/vidhost/ingest/"

var protocols = []string{"rtmp", "srt", "webrtc", "hls"}

func TestNoProtocolImportsAnother(t *testing.T) {
	for _, p := range protocols {
		out, err := exec.Command("go", "list", "-deps", "../"+p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, other := range protocols {
				if other != p && dep == mod+other {
					t.Errorf("%s imports %s (protocols meet only in core)", p, other)
				}
			}
		}
	}
}
