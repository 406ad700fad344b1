package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"hearth/realtime"
)

// wsFrame is any server→client frame (realtime/doc.go).
type wsFrame struct {
	Type      string            `json:"type"`
	Seq       int64             `json:"seq"`
	UserID    string            `json:"user_id"`
	ChatID    string            `json:"chat_id"`
	MessageID string            `json:"message_id"`
	Data      wsEventData       `json:"data"`
	Found     bool              `json:"found"`
	Truncated bool              `json:"truncated"`
	Since     int64             `json:"since"`
	Events    []json.RawMessage `json:"events"`
}

type wsEventData struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

// wsURL serves the fixture's real router on a real listener; the hub is
// closed before the listener (an open websocket would keep Close waiting).
func wsURL(t *testing.T, f *fixture) string {
	t.Helper()
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	t.Cleanup(f.srv.CloseRealtime)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
}

func wsDial(t *testing.T, url string, header http.Header) *wsClient {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, resp)
	}
	t.Cleanup(func() { ws.Close() })
	return &wsClient{t: t, ws: ws}
}

func cookie(tok string) http.Header { return http.Header{"Cookie": {"token=" + tok}} }

func (c *wsClient) send(v any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) tryRead() (wsFrame, []byte, error) {
	c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		return wsFrame{}, nil, err
	}
	var f wsFrame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return f, b, nil
}

func (c *wsClient) read() wsFrame {
	c.t.Helper()
	f, _, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

// ready waits for the ready frame of user id.
func (c *wsClient) ready(id string) {
	c.t.Helper()
	if f := c.read(); f.Type != "ready" || f.UserID != id {
		c.t.Fatalf("want ready for %s, got %+v", id, f)
	}
}

func (c *wsClient) auth(tok, id string) {
	c.t.Helper()
	c.send(map[string]string{"type": "auth", "token": tok})
	c.ready(id)
}

// closed reads until the connection ends; any frame before that fails the
// test unless allowFrames. It returns the close code (-1 without one).
func (c *wsClient) closed(allowFrames bool) int {
	c.t.Helper()
	for {
		f, _, err := c.tryRead()
		if err == nil {
			if !allowFrames {
				c.t.Fatalf("got %+v, want the connection closed", f)
			}
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection still open: %v", err)
		}
		return -1
	}
}

func note(f *fixture, userID, text string) {
	f.srv.hub.Emit(userID, realtime.Event{Data: realtime.Data{Type: "notification", Data: map[string]string{"type": "info", "content": text}}})
}

func TestWSRouting(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	byCookie := wsDial(t, url, cookie(f.userTok))
	byCookie.ready(f.user.ID)
	byFrame := wsDial(t, url, nil)
	byFrame.auth(f.userTok, f.user.ID)
	other := wsDial(t, url, nil)
	other.auth(f.otherTok, f.other.ID)
	anon := wsDial(t, url, nil)

	f.srv.emitter().Emit(f.user.ID, realtime.Event{ChatID: "c1", MessageID: "m1",
		Data: realtime.Data{Type: "chat:completion", Data: map[string]any{"content": "Hel"}}})
	note(f, f.other.ID, "marker")
	for _, c := range []*wsClient{byCookie, byFrame} {
		got := c.read()
		if got.Type != "events" || got.Seq != 1 || got.ChatID != "c1" || got.MessageID != "m1" ||
			got.Data.Type != "chat:completion" || string(got.Data.Data) != `{"content":"Hel"}` {
			t.Fatalf("user's connection got %+v", got)
		}
	}
	// other's first frame is its own marker: user's event did not reach it.
	if got := other.read(); got.Data.Type != "notification" || !strings.Contains(string(got.Data.Data), "marker") {
		t.Fatalf("other got %+v", got)
	}
	// The anonymous socket got nothing; a frame other than auth closes it.
	anon.send(map[string]string{"type": "heartbeat"})
	if code := anon.closed(false); code != realtime.CloseUnauthenticated {
		t.Fatalf("anonymous socket: close %d", code)
	}
	// Heartbeats of a signed-in connection are answered.
	byFrame.send(map[string]string{"type": "heartbeat"})
	if got := byFrame.read(); got.Type != "heartbeat" {
		t.Fatalf("heartbeat: %+v", got)
	}
}

func TestWSRefusals(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	revoked := f.jwt(f.user)
	expect(t, f.do("POST", "/api/v1/auths/signout", revoked, ""), 200, "")

	for _, tc := range []struct {
		name   string
		header http.Header
		token  string // sent in an auth frame; "" sends a heartbeat instead
		code   int
	}{
		{"revoked token frame", nil, revoked, realtime.CloseUnauthenticated},
		{"revoked cookie", cookie(revoked), "", realtime.CloseUnauthenticated},
		{"forged token", nil, f.userTok + "x", realtime.CloseUnauthenticated},
		{"API key", nil, f.userKey, realtime.CloseUnauthenticated},
		{"pending account", nil, f.pendingTok, realtime.CloseForbidden},
		{"pending cookie", cookie(f.pendingTok), "", realtime.CloseUnauthenticated},
		// Another site's page: the browser sends the cookie along, but it
		// must not authenticate (cross-site websocket hijacking).
		{"cross-site cookie", http.Header{"Cookie": {"token=" + f.userTok}, "Origin": {"https://evil.example"}}, "", realtime.CloseUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wsDial(t, url, tc.header)
			if tc.token != "" {
				c.send(map[string]string{"type": "auth", "token": tc.token})
			} else {
				c.send(map[string]string{"type": "heartbeat"})
			}
			note(f, f.user.ID, "not for you")
			note(f, f.pending.ID, "not for you")
			if code := c.closed(false); code != tc.code {
				t.Fatalf("close code %d, want %d", code, tc.code)
			}
		})
	}
	// A same-origin page's cookie works; a cross-origin page can still
	// authenticate with its token frame.
	c := wsDial(t, url, http.Header{"Cookie": {"token=" + f.userTok}, "Origin": {"http://" + strings.TrimPrefix(strings.TrimSuffix(url, "/ws"), "ws://")}})
	c.ready(f.user.ID)
	x := wsDial(t, url, http.Header{"Origin": {"https://elsewhere.example"}})
	x.auth(f.userTok, f.user.ID)
}

func TestWSUpgradeRequired(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/ws", f.userTok, "")
	expect(t, w, 400, "Invalid WebSocket upgrade request")
	w = f.doH("GET", "/ws", "", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}) // no key/version
	expect(t, w, 400, "Invalid WebSocket upgrade request")
}

func TestWSCatchUp(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	for i := 1; i <= 100; i++ {
		f.srv.emitter().Emit(f.user.ID, realtime.Event{ChatID: "c1", MessageID: "m1",
			Data: realtime.Data{Type: "chat:message:delta", Data: map[string]string{"content": fmt.Sprint(i)}}})
	}
	c := wsDial(t, url, nil)
	c.auth(f.userTok, f.user.ID)
	c.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 40})
	got := c.read()
	if got.Type != "resumed" || !got.Found || got.Truncated || got.Seq != 100 || len(got.Events) != 60 {
		t.Fatalf("resumed: %+v (%d events)", got, len(got.Events))
	}
	for i, raw := range got.Events {
		var e wsFrame
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(41+i) || string(e.Data.Data) != fmt.Sprintf(`{"content":"%d"}`, 41+i) {
			t.Fatalf("event %d: %s", i, raw)
		}
	}
	// Live events continue right after the replay.
	f.srv.emitter().Emit(f.user.ID, realtime.Event{ChatID: "c1", MessageID: "m1",
		Data: realtime.Data{Type: "chat:message:delta", Data: map[string]string{"content": "101"}}})
	if got := c.read(); got.Seq != 101 {
		t.Fatalf("live after resume: %+v", got)
	}
	// Another user cannot resume it.
	o := wsDial(t, url, nil)
	o.auth(f.otherTok, f.other.ID)
	o.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 0})
	if got := o.read(); got.Found || len(got.Events) != 0 {
		t.Fatalf("other's resume: %+v", got)
	}
}

func TestWSSlowConsumer(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	slow := wsDial(t, url, nil)
	slow.auth(f.userTok, f.user.ID) // and then never reads
	payload := json.RawMessage(`{"content":"` + strings.Repeat("x", 4096) + `"}`)
	start := time.Now()
	for i := 0; i < 10_000; i++ {
		f.srv.emitter().Emit(f.user.ID, realtime.Event{ChatID: "c1", Data: realtime.Data{Type: "notification", Data: payload}})
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Emit blocked: 10k events took %v", d)
	}
	if code := slow.closed(true); code != -1 && code != websocket.CloseAbnormalClosure {
		t.Fatalf("slow connection: close %d", code)
	}
}
