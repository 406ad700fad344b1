package server

func authzUsersRows() []authzRow {
	userPath := func(suffix string) func(f *fixture) string {
		return func(f *fixture) string { return "/api/v1/users/" + f.user.ID + suffix }
	}
	otherPath := func(f *fixture) string { return "/api/v1/users/" + f.other.ID }
	return []authzRow{
		{pattern: "GET /api/v1/users/", want: wantAdmin},
		{pattern: "GET /api/v1/users/all", want: wantAdmin},
		{pattern: "GET /api/v1/users/search", path: func(*fixture) string { return "/api/v1/users/search?query=example" }, want: wantVerified},
		{pattern: "GET /api/v1/users/permissions", want: wantVerified},
		{pattern: "GET /api/v1/users/default/permissions", want: wantAdmin},
		{pattern: "POST /api/v1/users/default/permissions", body: `{"chat":{"edit":false}}`, want: wantAdmin},
		{pattern: "GET /api/v1/users/groups", want: wantVerified},
		{pattern: "GET /api/v1/users/user/settings", want: wantVerified},
		{pattern: "POST /api/v1/users/user/settings/update", body: `{"ui":{"theme":"dark"}}`, want: wantVerified},
		{pattern: "GET /api/v1/users/user/info", want: wantVerified},
		{pattern: "POST /api/v1/users/user/info/update", body: `{"k":"v"}`, want: wantVerified},
		{pattern: "GET /api/v1/users/{user_id}", path: userPath(""), want: wantVerified},
		{pattern: "GET /api/v1/users/{user_id}/active", path: userPath("/active"), want: wantVerified},
		{pattern: "GET /api/v1/users/{user_id}/groups", path: userPath("/groups"), want: wantAdmin},
		// Served by profile.go; its row lives with the other /users routes.
		{pattern: "GET /api/v1/users/{user_id}/profile/image", path: userPath("/profile/image"), want: wantVerified},
		{pattern: "POST /api/v1/users/{user_id}/update", path: func(f *fixture) string { return otherPath(f) + "/update" }, body: `{"name":"Renamed"}`, want: wantAdmin},
		{pattern: "DELETE /api/v1/users/{user_id}", path: otherPath, want: wantAdmin},
	}
}
