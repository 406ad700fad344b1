package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"hearth/store"
)

// FuzzSCIMFilter throws arbitrary filters at the parser and, when one
// parses, at the SQL compiler through GET /Users and GET /Groups: a filter
// is either 400 invalidFilter or runs (200), never a 500 or a panic. Run
// longer with `go test ./server -run '^$' -fuzz FuzzSCIMFilter -fuzztime 30s`.
func FuzzSCIMFilter(f *testing.F) {
	for _, s := range []string{
		`userName eq "a@example.com"`, `externalId eq "x"`, `displayName co "a" and not (active eq false)`,
		`emails[type eq "work" and value sw "a"]`, `meta.created gt "2020-01-01T00:00:00Z"`, `members eq "x"`,
		`(a eq 1) or b pr`, `name.givenName ew "\u00e9"`, `userName eq "\"`, `not(`, `x[y[z eq 1]]`,
		`urn:ietf:params:scim:schemas:core:2.0:User:userName le null`, `groups.display ne true`,
	} {
		f.Add(s)
	}
	fx := newFixture(f, scimEnv)
	f.Fuzz(func(t *testing.T, filter string) {
		parsed, err := parseSCIMFilter(filter)
		var se *scimError
		if err != nil && (!errors.As(err, &se) || se.status != 400 || se.scimType != "invalidFilter") {
			t.Fatalf("%q: parse error %v", filter, err)
		}
		blank := strings.TrimSpace(filter) == "" // no filter at all
		for _, p := range []string{"/Users", "/Groups"} {
			w := fx.scimDo("GET", p+"?filter="+url.QueryEscape(filter), "")
			switch {
			case w.Code == 200 && (blank || parsed != nil):
			case w.Code == 400 && !blank:
				var e scimErrorBody
				if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.ScimType != "invalidFilter" || e.Status != "400" {
					t.Fatalf("%s %q: %s", p, filter, w.Body.String())
				}
			default:
				t.Fatalf("%s %q: status %d %s", p, filter, w.Code, w.Body.String())
			}
		}
	})
}

// FuzzSCIMPatch throws arbitrary PATCH bodies at a user and a group: the
// answer is 200 or a 4xx SCIM Error envelope, never a 500 or a panic.
func FuzzSCIMPatch(f *testing.F) {
	for _, s := range []string{
		`{"Operations":[{"op":"replace","path":"active","value":false}]}`,
		`{"Operations":[{"op":"Replace","value":{"active":"True","name.givenName":"A","externalId":"e"}}]}`,
		`{"Operations":[{"op":"add","path":"members","value":[{"value":"x"}]}]}`,
		`{"Operations":[{"op":"remove","path":"members[value eq \"x\"]"}]}`,
		`{"Operations":[{"op":"replace","path":"emails[type eq \"work\"].value","value":"a@example.org"}]}`,
		`{"Operations":[{"op":"remove","path":"name.familyName"},{"op":"add","path":"photos","value":"https://x.example/p.png"}]}`,
		`{"Operations":[{"op":"replace","path":"displayName","value":{"a":1}}]}`, `{"Operations":null}`, `{}`, `[]`, `{`,
	} {
		f.Add(uint8(0), s)
		f.Add(uint8(1), s)
	}
	fx := newFixture(f, scimEnv)
	g, err := fx.store.CreateSCIMGroup(context.Background(), scimActor(), store.Group{Name: "fuzz"}, "", "", []string{fx.user.ID})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := "/Users/" + fx.user.ID
		if which%2 == 1 {
			path = "/Groups/" + g.ID
		}
		w := fx.scimDo("PATCH", path, body)
		if w.Code == 200 {
			return
		}
		var e scimErrorBody
		if w.Code >= 500 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Status != itoa(int64(w.Code)) || e.Detail == "" {
			t.Fatalf("PATCH %s %q: status %d %s", path, body, w.Code, w.Body.String())
		}
	})
}
