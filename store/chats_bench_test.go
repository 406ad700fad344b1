package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// Benchmarks of the chat store (issue 3 figures). Large fixtures are built
// inside the benchmarks with bulk inserts in one transaction; normal tests
// stay small. Run: go test ./store -run '^$' -bench Chat -benchtime 20x

func benchStore(b *testing.B) (*Store, Actor) {
	b.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	u, err := s.CreateUser(ctx, NewUser{Email: "bench@example.com", Name: "Bench", Role: "user"})
	if err != nil {
		b.Fatal(err)
	}
	return s, Actor{UserID: u.ID, Role: u.Role}
}

// turnJSON is one conversation turn as the client sends it: the previous
// assistant message with its new childrenIds, the new user and assistant
// messages, and the new currentId.
func turnJSON(prevAssistant, user, assistant string, ts int) []byte {
	return []byte(fmt.Sprintf(`{"history":{"currentId":%q,"messages":{`+
		`%q:{"id":%q,"parentId":"x","childrenIds":[%q],"role":"assistant","content":"The previous answer, which is a few sentences long so that the body has a realistic size for a chat message.","model":"m1","modelName":"Model","modelIdx":0,"done":true,"timestamp":%d},`+
		`%q:{"id":%q,"parentId":%q,"childrenIds":[%q],"role":"user","content":"A follow-up question that asks for some more detail about the previous answer, please.","timestamp":%d,"models":["m1"]},`+
		`%q:{"id":%q,"parentId":%q,"childrenIds":[],"role":"assistant","content":"","model":"m1","modelName":"Model","modelIdx":0,"done":false,"timestamp":%d}}}}`,
		assistant, prevAssistant, prevAssistant, user, ts-1, user, user, prevAssistant, assistant, ts, assistant, assistant, user, ts))
}

// chatWithMessages builds a chat object of n messages in one linear thread.
func chatWithMessages(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"title":"Bench","models":["m1"],"history":{"currentId":"m` + fmt.Sprint(n-1) + `","messages":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role, parent, child := "user", "null", fmt.Sprintf(`"m%d"`, i+1)
		if i%2 == 1 {
			role = "assistant"
		}
		if i > 0 {
			parent = fmt.Sprintf(`"m%d"`, i-1)
		}
		if i == n-1 {
			child = ""
		}
		fmt.Fprintf(&b, `"m%d":{"id":"m%d","parentId":%s,"childrenIds":[%s],"role":%q,"content":"Message number %d of the benchmark chat; it carries a paragraph of ordinary text so that bodies have a realistic size, about the length of a short answer from a model.","timestamp":%d,"model":"m1","done":true}`,
			i, i, parent, child, role, i, 1700000000+i)
	}
	b.WriteString(`}},"messages":[]}`)
	return []byte(b.String())
}

func createBenchChat(b *testing.B, s *Store, a Actor, n int) string {
	b.Helper()
	p, err := ParseChat(chatWithMessages(n))
	if err != nil {
		b.Fatal(err)
	}
	id, err := s.CreateChat(context.Background(), a, NewChat{Chat: p})
	if err != nil {
		b.Fatal(err)
	}
	return id
}

// checkpoint empties the WAL so a benchmark does not pay for its setup.
func checkpoint(b *testing.B, s *Store) {
	b.Helper()
	if _, err := s.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkChatAppendTurn: the store-level merge of one turn (parse + one
// write transaction: the previous assistant message with new childrenIds, a
// new user and a new assistant message, currentId) into chats of 100, 1,000
// and 10,000 messages. The cost must not grow with the chat. Every database
// holds the same 10,100 messages in all (a second chat makes up the rest),
// because the full-text index is shared by all chats: its size is the
// database's, not the chat's, and must not skew the comparison.
func BenchmarkChatAppendTurn(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s, a := benchStore(b)
			id := createBenchChat(b, s, a, n)
			if rest := 10100 - n; rest > 0 {
				createBenchChat(b, s, a, rest)
			}
			checkpoint(b, s)
			ctx := context.Background()
			prev := fmt.Sprintf("m%d", n-1)
			turns := make([][]byte, b.N)
			for i := range b.N {
				turns[i] = turnJSON(prev, fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i), 1800000000+i)
				prev = fmt.Sprintf("a%d", i)
			}
			b.ResetTimer()
			for i := range b.N {
				p, err := ParseChat(turns[i])
				if err != nil {
					b.Fatal(err)
				}
				if err := s.UpdateChat(ctx, a, id, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChatGet2000: read and assemble a chat of 2,000 messages.
func BenchmarkChatGet2000(b *testing.B) {
	s, a := benchStore(b)
	id := createBenchChat(b, s, a, 2000)
	checkpoint(b, s)
	ctx := context.Background()
	b.ResetTimer()
	var size int
	for range b.N {
		rec, err := s.GetChat(ctx, a, id, false)
		if err != nil {
			b.Fatal(err)
		}
		size = len(rec.Chat)
	}
	b.ReportMetric(float64(size), "bytes/chat")
}

// Vocabulary of the search fixture: ordinary pseudo-words plus two marker
// words, "quasar" in about 1% of the chats and "lantern" in about 30%.
func benchWords(r *rand.Rand, n int) []string {
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe", "gu", "hi", "jo", "be", "ci", "wa", "yu", "xo"}
	words := make([]string, n)
	for i := range words {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		words[i] = w.String()
	}
	return words
}

func sentence(r *rand.Rand, words []string, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

// fill100k bulk-loads 100,000 chats of the actor, each with a title and 2
// to 5 messages of varied words, in one transaction (the FTS triggers run as
// they would in production).
func fill100k(b *testing.B, s *Store, a Actor) {
	b.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	words := benchWords(r, 5000)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	chatStmt, err := tx.Prepare(`INSERT INTO chats (seq, id, user_id, title, doc, created_at, updated_at, last_read_at) VALUES (?,?,?,?,?,?,?,?)`)
	if err != nil {
		b.Fatal(err)
	}
	msgStmt, err := tx.Prepare(`INSERT INTO messages (seq, chat_id, id, parent_id, role, done, timestamp, content, leaf, body) VALUES (?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("chat-%06d", i)
		title := sentence(r, words, 3+r.IntN(3))
		nm := 2 + r.IntN(4)
		marker := ""
		switch x := r.IntN(100); {
		case x == 0:
			marker = "quasar"
		case x < 31:
			marker = "lantern"
		}
		doc := fmt.Sprintf(`{"title":%q,"models":["m1"],"history":{"currentId":"%s-m%d"}}`, title, id, nm-1)
		ts := int64(1700000000 + i)
		if _, err := chatStmt.Exec(i, id, a.UserID, title, doc, ts, ts, ts); err != nil {
			b.Fatal(err)
		}
		markAt := r.IntN(nm)
		for j := range nm {
			content := sentence(r, words, 8+r.IntN(30))
			if marker != "" && j == markAt {
				content += " " + marker + " " + sentence(r, words, 4)
			}
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			mid := fmt.Sprintf("%s-m%d", id, j)
			var parent any
			if j > 0 {
				parent = fmt.Sprintf("%s-m%d", id, j-1)
			}
			leaf := 0
			if j == nm-1 {
				leaf = 1
			}
			body := fmt.Sprintf(`{"id":%q,"role":%q,"content":%q,"timestamp":%d}`, mid, role, content, ts)
			if _, err := msgStmt.Exec(int64(i)<<msgSeqBits|int64(j), id, mid, parent, role, 1, ts, content, leaf, body); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := s.write.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkChats100k: first page of the list, and searches for a word in
// about 1% and one in about 30% of 100,000 chats (about 350,000 messages).
func BenchmarkChats100k(b *testing.B) {
	s, a := benchStore(b)
	fill100k(b, s, a)
	checkpoint(b, s)
	ctx := context.Background()
	b.Run("list-first-page", func(b *testing.B) {
		for range b.N {
			items, err := s.ListChats(ctx, a, ChatListFilter{Limit: 60})
			if err != nil || len(items) != 60 {
				b.Fatal(err, len(items))
			}
		}
	})
	for _, tc := range []struct{ name, text string }{
		{"search-1pct", "quasar"},
		{"search-30pct", "lantern"},
		{"search-30pct-page2", "lantern"},
		{"search-title-word", "kalo"},
		{"search-two-terms-and", "lantern kalo"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			off := 0
			if strings.HasSuffix(tc.name, "page2") {
				off = 60
			}
			var n int
			for range b.N {
				items, err := s.SearchChats(ctx, a, tc.text, 60, off)
				if err != nil {
					b.Fatal(err)
				}
				n = len(items)
			}
			b.ReportMetric(float64(n), "results")
		})
	}
}

// BenchmarkCompletionTarget is what the completion pipeline reads before an
// answer starts, for a chat of 100 and 10,000 messages: the cost must not
// grow with the chat (compare BenchmarkChatGet2000, the whole chat).
func BenchmarkCompletionTarget(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, a := benchStore(b)
			id := createBenchChat(b, s, a, n)
			checkpoint(b, s)
			ctx := context.Background()
			last := fmt.Sprintf("m%d", n-1)
			b.ResetTimer()
			for range b.N {
				t, err := s.CompletionTarget(ctx, a, id, last)
				if err != nil || t.Body == nil {
					b.Fatal(t, err)
				}
			}
		})
	}
}
