package server

// authzMessagesRows: the messages-format and embeddings endpoints answer
// 400 "Model not found" to every verified caller here (the fixture has no
// models).
func authzMessagesRows() []authzRow {
	const msg = `{"model":"no-such-model","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	const emb = `{"model":"no-such-model","input":"hi"}`
	notFound := [5]int{401, 401, 400, 400, 400}
	return []authzRow{
		{pattern: "POST /api/message", body: msg, want: notFound},
		{pattern: "POST /api/v1/messages", body: msg, want: notFound},
		{pattern: "POST /api/embeddings", body: emb, want: notFound},
		{pattern: "POST /api/v1/embeddings", body: emb, want: notFound},
	}
}
