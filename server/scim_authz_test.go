package server

// testSCIMToken is the SCIM bearer token of scimEnv.
const testSCIMToken = "scim-test-token-0123456789"

// scimEnv turns SCIM on with testSCIMToken and the provider "idp".
var scimEnv = map[string]string{"SCIM_ENABLED": "true", "SCIM_TOKEN": testSCIMToken, "SCIM_AUTH_PROVIDER": "idp"}

// authzSCIMRows: with SCIM on, no account's JWT (admin included) is a SCIM
// credential, so every caller of the matrix gets 401 and only the SCIM token
// gets through; the discovery documents need no credential.
func authzSCIMRows() []authzRow {
	b := scimBase
	none := [5]int{401, 401, 401, 401, 401}
	userPath := func(f *fixture) string { return b + "/Users/" + f.user.ID }
	grpPath := func(f *fixture) string { return b + "/Groups/" + groupPath("")(f)[len("/api/v1/groups/id/"):] }
	return []authzRow{
		{pattern: "GET " + b + "/ServiceProviderConfig", env: scimEnv, want: wantPublic, scim: 200},
		{pattern: "GET " + b + "/ResourceTypes", env: scimEnv, want: wantPublic, scim: 200},
		{pattern: "GET " + b + "/Schemas", env: scimEnv, want: wantPublic, scim: 200},
		{pattern: "GET " + b + "/Users", env: scimEnv, want: none, scim: 200},
		{pattern: "POST " + b + "/Users", env: scimEnv, body: `{"userName":"new@example.com"}`, want: none, scim: 201},
		{pattern: "GET " + b + "/Users/{id}", env: scimEnv, path: userPath, want: none, scim: 200},
		{pattern: "PUT " + b + "/Users/{id}", env: scimEnv, path: userPath, body: `{"displayName":"Renamed"}`, want: none, scim: 200},
		{pattern: "PATCH " + b + "/Users/{id}", env: scimEnv, path: userPath,
			body: `{"Operations":[{"op":"replace","path":"displayName","value":"Renamed"}]}`, want: none, scim: 200},
		{pattern: "DELETE " + b + "/Users/{id}", env: scimEnv, path: userPath, want: none, scim: 204},
		{pattern: "GET " + b + "/Groups", env: scimEnv, setup: withGroup, want: none, scim: 200},
		{pattern: "POST " + b + "/Groups", env: scimEnv, body: `{"displayName":"new group"}`, want: none, scim: 201},
		{pattern: "GET " + b + "/Groups/{id}", env: scimEnv, setup: withGroup, path: grpPath, want: none, scim: 200},
		{pattern: "PUT " + b + "/Groups/{id}", env: scimEnv, setup: withGroup, path: grpPath, body: `{"displayName":"renamed"}`, want: none, scim: 200},
		{pattern: "PATCH " + b + "/Groups/{id}", env: scimEnv, setup: withGroup, path: grpPath,
			body: `{"Operations":[{"op":"add","path":"members","value":[]}]}`, want: none, scim: 200},
		{pattern: "DELETE " + b + "/Groups/{id}", env: scimEnv, setup: withGroup, path: grpPath, want: none, scim: 204},
	}
}
