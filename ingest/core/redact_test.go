package core

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

func TestStreamKeysNeverLoggedInFull(t *testing.T) {
	key := "lsk" + strings.Repeat("ab", 16)
	var buf bytes.Buffer
	l := log.New(RedactingWriter(&buf), "vidhost-edge: ", 0)
	l.Printf("webrtc: whip %s: ended: exit status 1 Error writing trailer of rtmp://127.0.0.1:1935/whip/%s: Broken pipe", key, key)
	l.Printf("srt: streamid=#!::r=live/%s,m=publish", key)
	out := buf.String()
	if strings.Contains(out, key) || strings.Contains(out, key[:7]) {
		t.Fatalf("a key in the log: %s", out)
	}
	if strings.Count(out, "lskaba…") != 3 || !strings.Contains(out, "rtmp://127.0.0.1:1935/whip/lskaba…: Broken pipe") {
		t.Fatalf("redacted: %s", out)
	}
	// Already shortened (6 characters, as the webrtc package logs them): left as is.
	if RedactKeys("no key here; lsk alone; lskXY; whip lsk86d…:") != "no key here; lsk alone; lskXY; whip lsk86d…:" {
		t.Fatal("redacts what is not a key")
	}
}
