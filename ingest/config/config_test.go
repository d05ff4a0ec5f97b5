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
		c.WHEPMaxViewers != 200 || c.RTMPAddr != "127.0.0.1:1935" || len(c.Announce) != 0 || c.ICETimeout != 10*time.Second ||
		c.AllowPrivateCandidates || c.WHEPOfferBurst != 10 || c.WHEPOffersPerSecond != 2 {
		t.Fatalf("defaults: %+v", c)
	}
	env := map[string]string{
		"LIVE_INGEST_HOST": "0.0.0.0", "LIVE_WEBRTC_UDP_PORT": "9000", "LIVE_WEBRTC_ANNOUNCE": " 203.0.113.7, ,198.51.100.1 ",
		"LIVE_EDGE_HTTP_HOST": "0.0.0.0", "LIVE_EDGE_HTTP_PORT": "9001", "LIVE_WHEP_MAX_VIEWERS": "5", "LIVE_RTMP_PORT": "1936",
		"LIVE_WEBRTC_ICE_TIMEOUT_SECONDS": "4", "LIVE_WEBRTC_ALLOW_PRIVATE_CANDIDATES": "true", "LIVE_WHEP_OFFER_BURST": "30", "LIVE_WHEP_OFFERS_PER_SECOND": "0.5",
	}
	c, err = FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.WebRTCAddr != "0.0.0.0:9000" || c.HTTPAddr != "0.0.0.0:9001" || c.WHEPMaxViewers != 5 || c.RTMPAddr != "0.0.0.0:1936" ||
		len(c.Announce) != 2 || c.Announce[0] != "203.0.113.7" || c.Announce[1] != "198.51.100.1" ||
		c.ICETimeout != 4*time.Second || !c.AllowPrivateCandidates || c.WHEPOfferBurst != 30 || c.WHEPOffersPerSecond != 0.5 {
		t.Fatalf("overrides: %+v", c)
	}
	// The credential: explicit, else derived from the upload secret (lib/config/live.ts: the same value).
	if c.Secret != "daafaf0d99f8d3ffb4c2ca8f4422240961e51a1cb54209e5824c73c6b3a98f88" {
		t.Fatalf("derived secret: %q", c.Secret)
	}
	if EdgeSecret(" given ", "u") != "given" || EdgeSecret("", "a-secret-of-16-bytes") == EdgeSecret("", "") {
		t.Fatal("explicit or derived secret")
	}
	for k, v := range map[string]string{"LIVE_WEBRTC_UDP_PORT": "70000", "LIVE_EDGE_HTTP_PORT": "x", "LIVE_WHEP_MAX_VIEWERS": "0", "LIVE_WEBRTC_ICE_TIMEOUT_SECONDS": "0", "LIVE_WHEP_OFFERS_PER_SECOND": "-1", "LIVE_WHEP_OFFER_BURST": "x"} {
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
