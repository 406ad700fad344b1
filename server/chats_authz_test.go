package server

import (
	"context"
	"testing"

	"hearth/store"
)

// authzChat is the chat the chat-owning authz rows act on: user's, with two
// messages (m1 → m2).
const authzChat = `{"title":"Authz chat","history":{"currentId":"m2","messages":{` +
	`"m1":{"id":"m1","parentId":null,"childrenIds":["m2"],"role":"user","content":"hello","timestamp":1},` +
	`"m2":{"id":"m2","parentId":"m1","childrenIds":[],"role":"assistant","content":"hi","timestamp":2}}}}`

// mkChat creates a chat of u from a chat object and returns its id.
func mkChat(f *fixture, u store.User, chat string) string {
	f.t.Helper()
	p, err := store.ParseChat([]byte(chat))
	if err != nil {
		f.t.Fatal(err)
	}
	id, err := f.store.CreateChat(context.Background(), actorOf(u), store.NewChat{Chat: p})
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// mkFolder creates a folder of u behind the folder API's back (that API is
// another area's) and returns its id.
func mkFolder(f *fixture, u store.User, id, name, parent string) string {
	f.t.Helper()
	var p any
	if parent != "" {
		p = parent
	}
	execSQL(f, `INSERT INTO folders (id, user_id, parent_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, 0, 0)`, id, u.ID, p, name)
	return id
}

func withChat(f *fixture) { mkChat(f, f.user, authzChat) }

func withSharedChat(f *fixture) {
	id := mkChat(f, f.user, authzChat)
	if err := f.store.ShareChat(context.Background(), actorOf(f.user), id); err != nil {
		f.t.Fatal(err)
	}
}

func withFolderChat(f *fixture) {
	mkFolder(f, f.user, "folder-of-user", "Work", "")
	id := mkChat(f, f.user, authzChat)
	if err := f.store.MoveChatToFolder(context.Background(), actorOf(f.user), id, "folder-of-user"); err != nil {
		f.t.Fatal(err)
	}
}

// userChatPath is the path of user's (only) chat plus suffix.
func userChatPath(suffix string) func(f *fixture) string {
	return func(f *fixture) string {
		items, err := f.store.ListChats(context.Background(), actorOf(f.user), store.ChatListFilter{IncludePinned: true, IncludeFolders: true})
		if err != nil || len(items) == 0 {
			f.t.Fatalf("no chat: %v", err)
		}
		return "/api/v1/chats/" + items[0].ID + suffix
	}
}

// sharePath is the path of user's share token plus suffix.
func sharePath(prefix, suffix string) func(f *fixture) string {
	return func(f *fixture) string {
		items, err := f.store.ListSharedChats(context.Background(), actorOf(f.user), store.ChatQuery{})
		if err != nil || len(items) == 0 {
			f.t.Fatalf("no share: %v", err)
		}
		return prefix + items[0].ShareID + suffix
	}
}

// Expectations of the chat rows: a chat of user; other (not the owner)
// gets 404 like a missing chat; admin reads any chat (ENABLE_ADMIN_CHAT_ACCESS
// is on by default), deletes any chat and edits any message, but does not
// update, archive, pin, clone, share or move another user's chat.
var (
	wantOwnerOrAdmin = [5]int{401, 401, 200, 404, 200}
	wantOwnerOnly    = [5]int{401, 401, 200, 404, 404}
)

func authzChatsRows() []authzRow {
	return []authzRow{
		{pattern: "POST /api/v1/chats/new", body: `{"chat":{"title":"new"}}`, want: wantVerified},
		{pattern: "GET /api/v1/chats/", setup: withChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/list", setup: withChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/pinned", setup: withChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/archived", setup: withChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/archived/count", want: wantVerified},
		{pattern: "GET /api/v1/chats/shared", setup: withSharedChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/search", setup: withChat, path: func(*fixture) string { return "/api/v1/chats/search?text=hello" }, want: wantVerified},
		{pattern: "GET /api/v1/chats/all", setup: withChat, want: wantVerified},
		{pattern: "GET /api/v1/chats/all/archived", want: wantVerified},
		{pattern: "GET /api/v1/chats/all/db", setup: withChat, want: wantAdmin},
		{pattern: "GET /api/v1/chats/list/user/{user_id}", setup: withChat,
			path: func(f *fixture) string { return "/api/v1/chats/list/user/" + f.user.ID }, want: wantAdmin},
		{pattern: "POST /api/v1/chats/import", body: `{"chats":[{"chat":{"title":"imported"}}]}`, want: wantVerified},
		{pattern: "DELETE /api/v1/chats/", setup: withChat, want: wantVerified},
		{pattern: "POST /api/v1/chats/archive/all", setup: withChat, want: wantVerified},
		{pattern: "POST /api/v1/chats/unarchive/all", setup: withChat, want: wantVerified},
		{pattern: "DELETE /api/v1/chats/share/all", setup: withSharedChat, want: wantVerified},
		// The token is the capability: any verified user holding it reads.
		{pattern: "GET /api/v1/chats/share/{share_id}", setup: withSharedChat, path: sharePath("/api/v1/chats/share/", ""), want: wantVerified},
		{pattern: "GET /api/v1/chats/folder/{folder_id}", setup: withFolderChat,
			path: func(*fixture) string { return "/api/v1/chats/folder/folder-of-user" }, want: wantOwnerOnly},
		{pattern: "GET /api/v1/chats/{id}", setup: withChat, path: userChatPath(""), want: wantOwnerOrAdmin},
		{pattern: "POST /api/v1/chats/{id}", setup: withChat, path: userChatPath(""), body: `{"chat":{"title":"renamed"}}`, want: wantOwnerOnly},
		{pattern: "DELETE /api/v1/chats/{id}", setup: withChat, path: userChatPath(""), want: wantOwnerOrAdmin},
		{pattern: "POST /api/v1/chats/{id}/archive", setup: withChat, path: userChatPath("/archive"), want: wantOwnerOnly},
		{pattern: "POST /api/v1/chats/{id}/pin", setup: withChat, path: userChatPath("/pin"), want: wantOwnerOnly},
		{pattern: "GET /api/v1/chats/{id}/pinned", setup: withChat, path: userChatPath("/pinned"), want: wantOwnerOnly},
		{pattern: "POST /api/v1/chats/{id}/clone", setup: withChat, path: userChatPath("/clone"), body: `{}`, want: wantOwnerOnly},
		{pattern: "POST /api/v1/chats/{id}/clone/shared", setup: withSharedChat, path: sharePath("/api/v1/chats/", "/clone/shared"), want: wantVerified},
		{pattern: "POST /api/v1/chats/{id}/share", setup: withChat, path: userChatPath("/share"), want: wantOwnerOnly},
		{pattern: "DELETE /api/v1/chats/{id}/share", setup: withSharedChat, path: userChatPath("/share"), want: wantOwnerOnly},
		{pattern: "POST /api/v1/chats/{id}/messages/{message_id}", setup: withChat, path: userChatPath("/messages/m2"),
			body: `{"content":"edited"}`, want: wantOwnerOrAdmin},
		{pattern: "DELETE /api/v1/chats/{id}/messages/{message_id}", setup: withChat, path: userChatPath("/messages/m2"), want: wantOwnerOrAdmin},
		{pattern: "POST /api/v1/chats/{id}/folder", setup: withChat, path: userChatPath("/folder"), body: `{"folder_id":null}`, want: wantOwnerOnly},
	}
}

// TestChatsAuthzRowsComplete checks that every chat route this area owns
// has a row (the matrix itself runs in TestAuthzMatrix).
func TestChatsAuthzRowsComplete(t *testing.T) {
	have := map[string]bool{}
	for _, r := range authzChatsRows() {
		have[r.pattern] = true
	}
	for _, p := range []string{"GET /api/v1/chats/{id}", "POST /api/v1/chats/{id}", "GET /api/v1/chats/share/{share_id}"} {
		if !have[p] {
			t.Errorf("no authz row for %s", p)
		}
	}
}
