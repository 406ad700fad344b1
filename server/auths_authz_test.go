package server

import "context"

func authzAuthRows() []authzRow {
	signin := `{"email":"user@example.com","password":"secret-password"}`
	return []authzRow{
		{pattern: "GET /api/v1/auths/", want: wantAnyRole},
		// Sign-in and sign-up answer on credentials, not on the caller.
		{pattern: "POST /api/v1/auths/signin", body: signin, want: wantPublic},
		{pattern: "POST /api/v1/auths/signup", body: `{"name":"N","email":"new@example.com","password":"pw-123456"}`, want: wantPublic},
		{pattern: "POST /api/v1/auths/signout", want: wantPublic},
		{pattern: "POST /api/v1/auths/ldap", body: `{"user":"u","password":"p"}`, want: [5]int{400, 400, 400, 400, 400}},
		{pattern: "POST /api/v1/auths/add", body: `{"name":"N","email":"added@example.com","password":"pw-123456","role":"user"}`, want: wantAdmin},
		{pattern: "POST /api/v1/auths/update/profile", body: `{"name":"New Name"}`, want: wantVerified},
		{pattern: "POST /api/v1/auths/update/timezone", body: `{"timezone":"Europe/Paris"}`, want: wantVerified},
		{pattern: "POST /api/v1/auths/update/password", body: `{"password":"secret-password","new_password":"another-pw"}`, want: wantVerified},
		{pattern: "GET /api/v1/auths/admin/details", want: wantAnyRole},
		// The legacy key of each caller: only admin has one (made in setup).
		{pattern: "GET /api/v1/auths/api_key", setup: func(f *fixture) {
			f.srv.store.CreateAPIKey(context.Background(), actorOf(f.admin), legacyKeyName, []byte("h-admin"), "sk-a…", true)
		}, want: [5]int{401, 401, 404, 404, 200}},
		{pattern: "POST /api/v1/auths/api_key", want: wantVerified},
		{pattern: "DELETE /api/v1/auths/api_key", want: wantVerified},
		{pattern: "GET /api/v1/auths/api_keys", want: wantVerified},
		{pattern: "POST /api/v1/auths/api_keys", body: `{"name":"ci"}`, want: wantVerified},
		// The fixture's key belongs to user: the owner revokes it, everyone
		// else gets the same 404 as for a missing key.
		{pattern: "DELETE /api/v1/auths/api_keys/{id}", path: func(f *fixture) string {
			keys, _ := f.store.ListAPIKeys(context.Background(), actorOf(f.user))
			return "/api/v1/auths/api_keys/" + keys[0].ID
		}, want: [5]int{401, 401, 200, 404, 404}},
	}
}
