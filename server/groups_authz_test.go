package server

import (
	"context"

	"hearth/store"
)

// withGroup gives the fixture a group "staff" whose member is user.
func withGroup(f *fixture) {
	ctx := context.Background()
	g, err := f.store.CreateGroup(ctx, actorOf(f.admin), store.Group{Name: "staff"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.store.ChangeMembers(ctx, actorOf(f.admin), g.ID, []string{f.user.ID}, nil); err != nil {
		f.t.Fatal(err)
	}
}

// groupPath is the path of the fixture's group plus suffix.
func groupPath(suffix string) func(f *fixture) string {
	return func(f *fixture) string {
		gs, err := f.store.ListGroups(context.Background(), actorOf(f.admin))
		if err != nil || len(gs) == 0 {
			f.t.Fatalf("no group: %v", err)
		}
		return "/api/v1/groups/id/" + gs[0].ID + suffix
	}
}

func authzGroupsRows() []authzRow {
	return []authzRow{
		{pattern: "GET /api/v1/groups/", setup: withGroup, want: wantVerified},
		{pattern: "POST /api/v1/groups/create", body: `{"name":"new group"}`, want: wantAdmin},
		{pattern: "GET /api/v1/groups/id/{id}", setup: withGroup, path: groupPath(""), want: wantAdmin},
		{pattern: "POST /api/v1/groups/id/{id}/update", setup: withGroup, path: groupPath("/update"), body: `{"description":"d"}`, want: wantAdmin},
		{pattern: "POST /api/v1/groups/id/{id}/users", setup: withGroup, path: groupPath("/users"), want: wantAdmin},
		{pattern: "POST /api/v1/groups/id/{id}/users/add", setup: withGroup, path: groupPath("/users/add"), body: `{"user_ids":[]}`, want: wantAdmin},
		{pattern: "POST /api/v1/groups/id/{id}/users/remove", setup: withGroup, path: groupPath("/users/remove"), body: `{"user_ids":[]}`, want: wantAdmin},
		{pattern: "DELETE /api/v1/groups/id/{id}/delete", setup: withGroup, path: groupPath("/delete"), want: wantAdmin},
	}
}
