// Package keycheck asks the media server whether a stream key may publish now
// (lib/live/key-check.ts, POST http://127.0.0.1:LIVE_SRT_CHECK_PORT/check), for SRT and WHIP alike.
package keycheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
)

// keyRE is a stream key's form (lib/live/keys.ts STREAM_KEY_RE).
var keyRE = regexp.MustCompile(`^lsk[0-9a-f]{32}$`)

// IsStreamKey tells a well-formed stream key (anything else is refused without asking).
func IsStreamKey(s string) bool { return keyRE.MatchString(s) }

// Admitted is a key the media server lets publish. LiveStreamID is empty when the media server
// answers the older bare 204.
type Admitted struct {
	LiveStreamID string `json:"live_stream_id"`
	WorkspaceID  string `json:"workspace_id"`
}

// Refused is the media server's no: Code is bad_key|unknown|disabled|busy|plan_limit.
type Refused struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func (r *Refused) Error() string { return r.Reason }

// Unreachable is a key check that did not answer (the media server is down or failing).
type Unreachable struct{ Err error }

func (u *Unreachable) Error() string { return fmt.Sprintf("key check: %v", u.Err) }

// Client asks one media server.
type Client struct {
	URL  string
	HTTP *http.Client
}

// New is a Client for url with a short timeout (a handshake waits on it).
func New(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{Timeout: 5 * time.Second}}
}

// Check asks whether key may publish over app ("srt", "whip"). The error is a *Refused or an
// *Unreachable. The body is JSON {"key","app"}; a media server that predates it reads that body
// as the key and refuses it as bad_key, and is then asked again with the bare key.
func (c *Client) Check(ctx context.Context, key, app string) (Admitted, error) {
	body, _ := json.Marshal(map[string]string{"key": key, "app": app})
	a, err := c.post(ctx, "application/json", body)
	var r *Refused
	if err != nil && asRefused(err, &r) && r.Code == "bad_key" {
		return c.post(ctx, "text/plain", []byte(key))
	}
	return a, err
}

func asRefused(err error, r **Refused) bool {
	v, ok := err.(*Refused)
	if ok {
		*r = v
	}
	return ok
}

func (c *Client) post(ctx context.Context, contentType string, body []byte) (Admitted, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return Admitted{}, &Unreachable{err}
	}
	req.Header.Set("Content-Type", contentType)
	res, err := c.HTTP.Do(req)
	if err != nil {
		return Admitted{}, &Unreachable{err}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	switch res.StatusCode {
	case http.StatusNoContent:
		return Admitted{}, nil
	case http.StatusOK:
		var a Admitted
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, &a); err != nil {
				return Admitted{}, &Unreachable{fmt.Errorf("unreadable answer: %v", err)}
			}
		}
		return a, nil
	case http.StatusForbidden:
		r := &Refused{}
		_ = json.Unmarshal(raw, r)
		if r.Reason == "" {
			r.Reason = "refused (" + r.Code + ")"
		}
		return Admitted{}, r
	}
	return Admitted{}, &Unreachable{fmt.Errorf("HTTP %d", res.StatusCode)}
}
