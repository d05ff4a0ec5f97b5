package config

import (
	"testing"
	"time"
)

func TestFromEnvDefaultsAndOverrides(t *testing.T) {
	c, err := FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.SRTAddr != "127.0.0.1:8890" || c.CheckURL != "http://127.0.0.1:8891/check" || c.HTTPAddr != "127.0.0.1:8889" || c.WebRTCAddr != "127.0.0.1:8189" ||
		c.WHEPMaxViewers != 200 || c.MediaURL != "rtmp://127.0.0.1:1935" || c.FFmpeg != "ffmpeg" || len(c.Announce) != 0 || c.ICETimeout != 10*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	env := map[string]string{
		"LIVE_INGEST_HOST": "0.0.0.0", "LIVE_WEBRTC_UDP_PORT": "9000", "LIVE_WEBRTC_ANNOUNCE": " 203.0.113.7, ,198.51.100.1 ",
		"LIVE_EDGE_HTTP_HOST": "0.0.0.0", "LIVE_EDGE_HTTP_PORT": "9001", "LIVE_WHEP_MAX_VIEWERS": "5", "LIVE_MEDIA_INTERNAL_URL": "rtmp://media:1935/",
	}
	c, err = FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.WebRTCAddr != "0.0.0.0:9000" || c.HTTPAddr != "0.0.0.0:9001" || c.WHEPMaxViewers != 5 || c.MediaURL != "rtmp://media:1935" ||
		len(c.Announce) != 2 || c.Announce[0] != "203.0.113.7" || c.Announce[1] != "198.51.100.1" {
		t.Fatalf("overrides: %+v", c)
	}
	for k, v := range map[string]string{"LIVE_WEBRTC_UDP_PORT": "70000", "LIVE_EDGE_HTTP_PORT": "x", "LIVE_WHEP_MAX_VIEWERS": "0"} {
		if _, err := FromEnv(func(n string) string {
			if n == k {
				return v
			}
			return ""
		}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}
