package server

import (
	"context"

	"hearth/store"
)

// ftUserChat is the id of the chat withUserChat gives `user`.
const ftUserChat = "chat-of-user"

// withUserChat gives `user` a chat tagged "work".
func withUserChat(f *fixture) {
	ftChat(f, f.user, ftUserChat, "", 100, false, false)
	if _, err := f.store.AddChatTag(context.Background(), actorOf(f.user), ftUserChat, "work"); err != nil {
		f.t.Fatal(err)
	}
}

// withUserFolder gives `user` a folder "Work" holding a chat.
func withUserFolder(f *fixture) {
	fo, err := f.store.CreateFolder(context.Background(), actorOf(f.user), store.NewFolder{Name: "Work"})
	if err != nil {
		f.t.Fatal(err)
	}
	ftChat(f, f.user, "chat-in-folder", fo.ID, 100, false, false)
}

// userFolderPath is prefix + the id of user's folder + suffix.
func userFolderPath(prefix, suffix string) func(f *fixture) string {
	return func(f *fixture) string {
		fs, err := f.store.ListFolders(context.Background(), actorOf(f.user))
		if err != nil || len(fs) == 0 {
			f.t.Fatalf("no folder: %v", err)
		}
		return prefix + fs[0].ID + suffix
	}
}

// Rows of the folder and chat-tag routes. Folders, chats and tags are
// private: `other` and admin too get 404 for user's objects (admins act on
// their own data here, as in Open WebUI's folder and tag routes).
func authzFoldersRows() []authzRow {
	owned := [5]int{401, 401, 200, 404, 404}
	chatPath := func(suffix string) func(f *fixture) string {
		return func(*fixture) string { return "/api/v1/chats/" + ftUserChat + suffix }
	}
	return []authzRow{
		{pattern: "GET /api/v1/chats/{id}/tags", setup: withUserChat, path: chatPath("/tags"), want: owned},
		{pattern: "POST /api/v1/chats/{id}/tags", setup: withUserChat, path: chatPath("/tags"), body: `{"name":"x"}`, want: owned},
		{pattern: "DELETE /api/v1/chats/{id}/tags", setup: withUserChat, path: chatPath("/tags"), body: `{"name":"work"}`, want: owned},
		{pattern: "GET /api/v1/chats/all/tags", setup: withUserChat, want: wantVerified},
		{pattern: "POST /api/v1/chats/tags", setup: withUserChat, body: `{"name":"work"}`, want: wantVerified},
		{pattern: "GET /api/v1/chats/folder/{folder_id}/list", setup: withUserFolder, path: userFolderPath("/api/v1/chats/folder/", "/list"), want: owned},

		{pattern: "GET /api/v1/folders/", setup: withUserFolder, want: wantVerified},
		{pattern: "POST /api/v1/folders/", body: `{"name":"New"}`, want: wantVerified},
		{pattern: "GET /api/v1/folders/{id}", setup: withUserFolder, path: userFolderPath("/api/v1/folders/", ""), want: owned},
		{pattern: "POST /api/v1/folders/{id}/update", setup: withUserFolder, path: userFolderPath("/api/v1/folders/", "/update"), body: `{"name":"Renamed"}`, want: owned},
		{pattern: "POST /api/v1/folders/{id}/update/parent", setup: withUserFolder, path: userFolderPath("/api/v1/folders/", "/update/parent"), body: `{"parent_id":null}`, want: owned},
		{pattern: "POST /api/v1/folders/{id}/update/expanded", setup: withUserFolder, path: userFolderPath("/api/v1/folders/", "/update/expanded"), body: `{"is_expanded":true}`, want: owned},
		{pattern: "DELETE /api/v1/folders/{id}", setup: withUserFolder, path: userFolderPath("/api/v1/folders/", ""), want: owned},
	}
}
