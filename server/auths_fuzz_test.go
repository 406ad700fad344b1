package server

import (
	"encoding/json"
	"testing"
)

// FuzzAuthBodies throws arbitrary bodies at the JSON endpoints of the auth
// area: the server must answer below 500 with a {"detail": string} error
// body, and never panic. Run longer with
// `go test ./server -run '^$' -fuzz FuzzAuthBodies -fuzztime 60s`; the
// corpus found so far is kept in testdata/fuzz/FuzzAuthBodies.
func FuzzAuthBodies(f *testing.F) {
	seeds := []string{
		`{"email":"user@example.com","password":"secret-password"}`,
		`{"name":"N","email":"n@example.com","password":"pw","confirm_password":"pw"}`,
		`{"name":1}`, `{"email":null}`, `[]`, `null`, `"x"`, `{"a":{"b":[1,2,{"c":"d"}]}}`,
		`{"email":"a@b.c","password":"` + "\x00\xff" + `"}`, `{"name":"\ud800"}`, `{}`, `{`, ``,
		`{"profile_image_url":"data:image/png;base64,AAAA"}`, `{"timezone":"../../etc/passwd"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	paths := []struct{ path, who string }{
		{"/api/v1/auths/signin", ""}, {"/api/v1/auths/signup", ""}, {"/api/v1/auths/ldap", ""},
		{"/api/v1/auths/add", "admin"}, {"/api/v1/auths/update/profile", "user"},
		{"/api/v1/auths/update/timezone", "user"}, {"/api/v1/auths/update/password", "user"},
		{"/api/v1/auths/api_keys", "user"},
	}
	fx := newFixture(f, nil)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		p := paths[int(which)%len(paths)]
		tok := map[string]string{"": "", "user": fx.userTok, "admin": fx.adminTok}[p.who]
		w := fx.do("POST", p.path, tok, string(body))
		if w.Code >= 500 {
			t.Fatalf("POST %s %q: status %d %s", p.path, body, w.Code, w.Body.String())
		}
		if w.Code >= 400 {
			var e struct {
				Detail *string `json:"detail"`
			}
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Detail == nil {
				t.Fatalf("POST %s %q: error body %s", p.path, body, w.Body.String())
			}
		}
	})
}
