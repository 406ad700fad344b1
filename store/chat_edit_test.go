package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEditMessage(t *testing.T) {
	s, owner, _, _ := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, owner, `{"title":"t","history":{"currentId":"u1","messages":{
		"u1":{"id":"u1","role":"user","content":"hi","childrenIds":["a1"],"x":1},
		"a1":{"id":"a1","parentId":"u1","role":"assistant","content":"","childrenIds":[],"done":false,"statusHistory":[{"d":1}],"embeds":["old"]}}}}`)
	err := s.EditMessage(ctx, owner, id, "a1", MessageEdit{
		Set:           map[string]json.RawMessage{"done": json.RawMessage(`true`), "usage": json.RawMessage(`{"total_tokens":3}`)},
		SetOrder:      []string{"done", "usage"},
		AppendContent: "Hello",
		Append:        map[string]json.RawMessage{"statusHistory": json.RawMessage(`[{"d":2}]`), "sources": json.RawMessage(`[{"s":1}]`)},
		Prepend:       map[string]json.RawMessage{"embeds": json.RawMessage(`["new"]`)},
		MoveCurrent:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := string(mustGet(t, s, owner, id).Chat)
	want := `"a1":{"id":"a1","parentId":"u1","role":"assistant","content":"Hello","childrenIds":[],"done":true,"statusHistory":[{"d":1},{"d":2}],"embeds":["new","old"],"usage":{"total_tokens":3},"sources":[{"s":1}]}`
	if !strings.Contains(got, want) || !strings.Contains(got, `"currentId":"a1"`) {
		t.Fatalf("chat after edit:\n%s\nwant to contain\n%s", got, want)
	}
	// Another user cannot edit; a missing message is ErrNotFound.
	if err := s.EditMessage(ctx, Actor{UserID: "someone", Role: "user"}, id, "a1", MessageEdit{AppendContent: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other user: %v", err)
	}
	if err := s.EditMessage(ctx, owner, id, "nope", MessageEdit{AppendContent: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing message: %v", err)
	}
}

func TestCompletionTarget(t *testing.T) {
	s, owner, other, _ := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, owner, `{"title":"Named","history":{"currentId":"u2","messages":{
		"u1":{"id":"u1","role":"user","content":"a1 is mentioned here","childrenIds":["a1"]},
		"a1":{"id":"a1","parentId":"u1","role":"assistant","content":"ok","childrenIds":["u2"],"done":true},
		"u2":{"id":"u2","parentId":"a1","role":"user","content":"next","childrenIds":["a2"]}}}}`)
	got, err := s.CompletionTarget(ctx, owner, id, "a1")
	if err != nil || got.Title != "Named" || !strings.Contains(string(got.Body), `"content":"ok"`) || got.ParentID != "" {
		t.Fatalf("stored message: %+v %v", got, err)
	}
	// A placeholder the client has not stored yet: its parent is the
	// message listing it (not the one that merely mentions its id).
	got, err = s.CompletionTarget(ctx, owner, id, "a2")
	if err != nil || got.Body != nil || got.ParentID != "u2" {
		t.Fatalf("missing message: %+v %v", got, err)
	}
	if got, err = s.CompletionTarget(ctx, owner, id, "zz"); err != nil || got.Body != nil || got.ParentID != "" {
		t.Fatalf("orphan: %+v %v", got, err)
	}
	// Someone else's chat is not found, admin or not (completions are the owner's).
	for _, a := range []Actor{other, {UserID: "root", Role: "admin"}} {
		if _, err := s.CompletionTarget(ctx, a, id, "a1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%+v: %v", a, err)
		}
	}
}

func TestMessagePath(t *testing.T) {
	s, owner, other, _ := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, owner, `{"history":{"currentId":"a2","messages":{
		"u1":{"id":"u1","role":"user","content":"q1","childrenIds":["a1","b1"]},
		"a1":{"id":"a1","parentId":"u1","role":"assistant","content":"r1","childrenIds":["u2"]},
		"b1":{"id":"b1","parentId":"u1","role":"assistant","content":"other branch","childrenIds":[]},
		"u2":{"id":"u2","parentId":"a1","role":"user","content":"q2","childrenIds":["a2"]},
		"a2":{"id":"a2","parentId":"u2","role":"assistant","content":"r2","childrenIds":[]},
		"c1":{"id":"c1","parentId":"c2","role":"user","content":"loop"},
		"c2":{"id":"c2","parentId":"c1","role":"assistant","content":"loop"}}}}`)
	ids := func(p []PathMessage) string {
		var out []string
		for _, m := range p {
			out = append(out, m.ID+":"+m.Role)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		leaf  string
		limit int
		want  string
	}{
		{"a2", 0, "u1:user a1:assistant u2:user a2:assistant"},
		{"a2", 2, "u2:user a2:assistant"},
		{"a2", 9, "u1:user a1:assistant u2:user a2:assistant"},
		{"b1", 0, "u1:user b1:assistant"},
		{"c1", 0, "c2:assistant c1:user"}, // a cycle ends where it closes
		{"zz", 0, ""},
	} {
		got, err := s.MessagePath(ctx, owner, id, tc.leaf, tc.limit)
		if err != nil || ids(got) != tc.want {
			t.Fatalf("path to %s (limit %d) = %q, %v; want %q", tc.leaf, tc.limit, ids(got), err, tc.want)
		}
	}
	if got, _ := s.MessagePath(ctx, owner, id, "a2", 1); !strings.Contains(string(got[0].Body), `"content":"r2"`) {
		t.Fatalf("body: %s", got[0].Body)
	}
	if _, err := s.MessagePath(ctx, other, id, "a2", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other user: %v", err)
	}
}
