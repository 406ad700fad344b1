package server

// authzRealtimeRows: the live connection is public (it authenticates in the
// handshake or its first frame), so a plain GET without an upgrade is 400
// for everyone; the event endpoint is verified and chat-owned (other → 404,
// admins may post to any chat).
func authzRealtimeRows() []authzRow {
	return []authzRow{
		{pattern: "GET /ws", want: [5]int{400, 400, 400, 400, 400}},
		{pattern: "POST /api/v1/chats/{id}/messages/{message_id}/event", setup: withChat,
			path: userChatPath("/messages/m2/event"), body: `{"type":"status","data":{"description":"working","done":false}}`,
			want: [5]int{401, 401, 200, 404, 200}},
	}
}
