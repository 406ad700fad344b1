package server

import (
	"context"

	"hearth/store"
)

// userChatTasksPath is "/api/tasks/chat/<user's chat id>" plus suffix.
func userChatTasksPath(suffix string) func(f *fixture) string {
	return func(f *fixture) string {
		items, err := f.store.ListChats(context.Background(), actorOf(f.user), store.ChatListFilter{IncludePinned: true, IncludeFolders: true})
		if err != nil || len(items) == 0 {
			f.t.Fatalf("no chat: %v", err)
		}
		return "/api/tasks/chat/" + items[0].ID + suffix
	}
}

// authzPipelineRows: completions answer 400 "Model not found" to every
// verified caller here (the fixture has no models); stopping a chat's tasks
// is for its owner or an admin (other → 404 like a missing chat).
func authzPipelineRows() []authzRow {
	const completion = `{"model":"no-such-model","messages":[{"role":"user","content":"hi"}]}`
	return []authzRow{
		{pattern: "POST /api/chat/completions", body: completion, want: [5]int{401, 401, 400, 400, 400}},
		{pattern: "POST /api/v1/chat/completions", body: completion, want: [5]int{401, 401, 400, 400, 400}},
		{pattern: "POST /api/chat/completed", body: `{"messages":[{"role":"user","content":"hi"}]}`, want: wantVerified},
		{pattern: "GET /api/tasks", want: wantAdmin},
		{pattern: "GET /api/tasks/chat/{chat_id}", setup: withChat, path: userChatTasksPath(""), want: wantVerified},
		{pattern: "POST /api/tasks/chat/{chat_id}/stop", setup: withChat, path: userChatTasksPath("/stop"), want: [5]int{401, 401, 200, 404, 200}},
		{pattern: "POST /api/tasks/stop/{task_id}", path: func(*fixture) string { return "/api/tasks/stop/no-such-task" }, want: wantAdmin},
		{pattern: "GET /api/v1/tasks/config", want: wantAdmin},
		{pattern: "POST /api/v1/tasks/config/update", body: `{"ENABLE_TITLE_GENERATION":true}`, want: wantAdmin},
	}
}
