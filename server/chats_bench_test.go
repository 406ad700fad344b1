package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"hearth/store"
)

// benchChatBody is a chat object of n messages in one thread.
func benchChatBody(n int) string {
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
	b.WriteString(`}}}`)
	return b.String()
}

// BenchmarkChatTurnHTTP: POST /api/v1/chats/{id} with one turn (three
// messages) through the real router, on chats of 100, 1,000 and 10,000
// messages; and GET of the same chat, which is the part of the POST that
// grows with the chat (the answer is the whole chat by contract).
func BenchmarkChatTurnHTTP(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		f := newFixture(b, nil)
		p, err := store.ParseChat([]byte(benchChatBody(n)))
		if err != nil {
			b.Fatal(err)
		}
		id, err := f.store.CreateChat(context.Background(), actorOf(f.user), store.NewChat{Chat: p})
		if err != nil {
			b.Fatal(err)
		}
		prev := fmt.Sprintf("m%d", n-1)
		turn := 0
		b.Run(fmt.Sprintf("post/messages=%d", n), func(b *testing.B) {
			bodies := make([]string, b.N)
			for i := range b.N {
				u, a := fmt.Sprintf("u%d", turn), fmt.Sprintf("a%d", turn)
				turn++
				bodies[i] = fmt.Sprintf(`{"chat":{"history":{"currentId":%q,"messages":{`+
					`%q:{"id":%q,"childrenIds":[%q],"role":"assistant","content":"Previous answer.","done":true,"timestamp":1800000000},`+
					`%q:{"id":%q,"parentId":%q,"childrenIds":[%q],"role":"user","content":"A follow-up question.","timestamp":1800000001},`+
					`%q:{"id":%q,"parentId":%q,"childrenIds":[],"role":"assistant","content":"","done":false,"timestamp":1800000002}}}}}`,
					a, prev, prev, u, u, u, prev, a, a, a, u)
				prev = a
			}
			b.ResetTimer()
			for i := range b.N {
				if w := f.do("POST", "/api/v1/chats/"+id, f.userTok, bodies[i]); w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
		b.Run(fmt.Sprintf("get/messages=%d", n), func(b *testing.B) {
			for range b.N {
				if w := f.do("GET", "/api/v1/chats/"+id, f.userTok, ""); w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
