package keycheck

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The service's hooks next to the key check (lib/live/hooks.ts): the edge tells it when an
// admitted publisher starts (POST /connected) and ends (POST /disconnected), for every protocol;
// the service signals the live stream's workflow. core.Hooks.

// HookError is the service's answer to a hook that is not a yes.
type HookError struct {
	Status int
	Msg    string
}

func (e *HookError) Error() string { return fmt.Sprintf("HTTP %d %s", e.Status, e.Msg) }

// Instance names this edge process (random at start): the connected hook carries it and every
// answer of the internal API says it (X-Edge-Instance), so the service tells a publisher this
// process still carries from one an edge that died took with it.
var Instance = newInstance()

func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "edge_" + hex.EncodeToString(b[:])
}

// hookClient waits longer than the key check: the service signals a workflow before it answers.
var hookClient = &http.Client{Timeout: 20 * time.Second}

func (c *Client) hookURL(name string) string {
	return strings.TrimSuffix(c.URL, "/check") + "/" + name
}

// hook posts body to name, trying again (three times, a second apart) while the service does not answer.
func (c *Client) hook(name string, body map[string]string) (refused bool, err error) {
	raw, _ := json.Marshal(body)
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Second)
		}
		var res *http.Response
		res, err = hookClient.Post(c.hookURL(name), "application/json", bytes.NewReader(raw))
		if err != nil {
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		res.Body.Close()
		switch {
		case res.StatusCode/100 == 2:
			return false, nil
		case res.StatusCode/100 == 4:
			var e struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(msg, &e)
			if e.Reason == "" {
				e.Reason = strings.TrimSpace(string(msg))
			}
			return true, &HookError{res.StatusCode, e.Reason}
		default:
			err = &HookError{res.StatusCode, strings.TrimSpace(string(msg))}
		}
	}
	return false, err
}

// Connected says an admitted publisher of liveStreamID started (session names it; protocol is rtmp|srt|whip).
func (c *Client) Connected(liveStreamID, session, protocol string) (bool, error) {
	return c.hook("connected", map[string]string{"live_stream_id": liveStreamID, "session": session, "protocol": protocol, "edge": Instance})
}

// Disconnected says that publisher ended, and why.
func (c *Client) Disconnected(liveStreamID, session, reason string) error {
	_, err := c.hook("disconnected", map[string]string{"live_stream_id": liveStreamID, "session": session, "reason": reason})
	return err
}
