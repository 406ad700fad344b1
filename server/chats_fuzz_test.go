package server

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzChatMerge: nothing a client sends can make a chat unreadable. A chat
// is created, then fuzzed update bodies are applied (accepted or refused,
// never 500); after each, GET must answer 200 with valid JSON, and the list
// and search (with the fuzzed text as the query) must not fail. The seed
// corpus is in testdata/fuzz/FuzzChatMerge.
func FuzzChatMerge(f *testing.F) {
	seeds := []string{
		`{"chat":{"title":"x"}}`,
		`{"chat":{"history":{"currentId":"a","messages":{"a":{"id":"a","parentId":"b","childrenIds":["b"]},"b":{"id":"b","parentId":"a","childrenIds":["a"]}}}}}`,
		`{"chat":{"history":{"currentId":7,"messages":{"m1":{"id":5,"role":{"x":1},"content":[{"type":"text","text":"hi"},3,null],"timestamp":"x","done":"y","childrenIds":"z"}}}}}`,
		`{"chat":{"messages":{"not":"a list"},"history":{"messages":{}}}}`,
		`{"chat":{"history":{"messages":{"\u0000":{"id":"\ud800","content":"\u0000\\u0000"}}}}}`,
		`{"chat":{"title":"a","title":"b","history":{"currentId":"q","currentId":null}}}`,
		"{\"chat\":{\"title\":\"\xff\xfe\",\"history\":{\"messages\":{\"k\":{\"content\":\"\xc3\"}}}}}",
		`{"chat":{"history":{"messages":{"a":{"id":"a","timestamp":1e400,"parentId":null}}}}}`,
		`{"chat":{"history":{"messages":{"a":[]}}}}`,
		`{"chat":[]}`,
		`{"chat":{"history":null}}`,
		`{"chat":{"history":{"messages":{"deep":{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}}}}}`,
		`{"chat":{"title":"\"*NEAR( AND OR -- ^","history":{"messages":{"a":{"id":"a","role":"user","content":"\" OR \" AND NOT *"}}}}}`,
		`not json`,
		``,
		`{"id":"f","parentId":"f","childrenIds":["f"],"role":"assistant","content":"self loop","timestamp":1}`,
		`{"title":"as a chat","history":{"messages":{"z":{"id":"z","content":[{"type":"text","text":"blocks"}]}}},"messages":null}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	fx := newFixture(f, nil)
	id := newChatTB(f, fx, `{"title":"fuzz","history":{"currentId":"a","messages":{"a":{"id":"a","role":"user","content":"seed"}}},"messages":[]}`)
	f.Fuzz(func(t *testing.T, body string) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 30*time.Second { // a hang, not a slow machine
				t.Fatalf("one input took %s", d)
			}
		}()
		// The input as the whole body, as the chat object, and as one
		// message body (so mutations of plain JSON reach the deeper rules).
		for _, b := range []string{
			body,
			`{"chat":` + body + `}`,
			`{"chat":{"history":{"currentId":"f","messages":{"f":` + body + `}},"messages":[` + body + `]}}`,
		} {
			if w := fx.do("POST", "/api/v1/chats/"+id, fx.userTok, b); w.Code >= 500 {
				t.Fatalf("update → %d: %s", w.Code, w.Body.String())
			}
			if w := fx.do("POST", "/api/v1/chats/new", fx.userTok, b); w.Code >= 500 {
				t.Fatalf("create → %d: %s", w.Code, w.Body.String())
			}
		}
		w := fx.do("GET", "/api/v1/chats/"+id, fx.userTok, "")
		if w.Code != 200 || !json.Valid(w.Body.Bytes()) {
			t.Fatalf("GET → %d valid=%v: %.300s", w.Code, json.Valid(w.Body.Bytes()), w.Body.String())
		}
		for _, path := range []string{
			"/api/v1/chats/?page=1",
			"/api/v1/chats/search?text=" + url.QueryEscape(body),
			"/api/v1/chats/search?text=" + url.QueryEscape(strings.ToLower(body)) + "&page=2",
		} {
			if w := fx.do("GET", path, fx.userTok, ""); w.Code != 200 || !json.Valid(w.Body.Bytes()) {
				t.Fatalf("GET %s → %d: %.300s", path, w.Code, w.Body.String())
			}
		}
	})
}

// newChatTB is newChat for any testing.TB (fuzz targets build their fixture
// before the fuzz loop).
func newChatTB(tb testing.TB, f *fixture, chat string) string {
	tb.Helper()
	w := f.do("POST", "/api/v1/chats/new", f.userTok, `{"chat":`+chat+`}`)
	if w.Code != 200 {
		tb.Fatalf("create: %d %s", w.Code, w.Body.String())
	}
	var c struct{ ID string }
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
		tb.Fatal(err)
	}
	return c.ID
}
