#!/usr/bin/env bash
# The backend-driven conversation flow of SPEC.md §4, with curl, against a
# running Hearth (or Open WebUI: the calls are the same).
#
#   HEARTH_URL=http://localhost:8080 HEARTH_KEY=sk-... MODEL=llama3.2 ./examples/curl-flow.sh
#
# HEARTH_KEY is an API key (Settings → Account) or a session token. Needs
# curl, jq and uuidgen (or /proc/sys/kernel/random/uuid). Documentation, not
# run in CI.
set -euo pipefail

BASE=${HEARTH_URL:-http://localhost:8080}
KEY=${HEARTH_KEY:?set HEARTH_KEY to an API key or token}
MODEL=${MODEL:-llama3.2}

uuid() { uuidgen 2>/dev/null | tr 'A-Z' 'a-z' || cat /proc/sys/kernel/random/uuid; }
api() { # method path [json body]
	curl -fsS -X "$1" "$BASE$2" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' ${3:+--data-binary "$3"}
}
now() { date +%s; }

SESSION=$(uuid)

# 1. Create the chat: a user message and an empty assistant placeholder,
#    linked by parentId / childrenIds, currentId on the placeholder, and the
#    same two messages in messages[]. Message timestamps are seconds; the
#    chat's own timestamp is milliseconds.
U1=$(uuid) A1=$(uuid) T=$(now)
USER1=$(jq -nc --arg id "$U1" --arg a "$A1" --arg m "$MODEL" --argjson t "$T" \
	'{id:$id, parentId:null, childrenIds:[$a], role:"user", content:"What is the capital of France?", timestamp:$t, models:[$m]}')
ASSIST1=$(jq -nc --arg id "$A1" --arg u "$U1" --arg m "$MODEL" --argjson t "$T" \
	'{id:$id, parentId:$u, childrenIds:[], role:"assistant", content:"", model:$m, modelName:$m, modelIdx:0, done:false, timestamp:$t}')
CHAT=$(jq -nc --arg m "$MODEL" --arg cur "$A1" --argjson u "$USER1" --argjson a "$ASSIST1" --argjson ms "$(($(now) * 1000))" \
	'{chat: {title:"Capitals", models:[$m], files:[], tags:[], params:{}, timestamp:$ms,
	         history:{currentId:$cur, messages:{($u.id):$u, ($a.id):$a}}, messages:[$u, $a]}}')
CHAT_ID=$(api POST /api/v1/chats/new "$CHAT" | jq -r .id)
echo "chat $CHAT_ID"

# 2. Ask for the completion into the placeholder (chat_id + id), then
# 3. poll GET until the assistant message has content.
complete() { # assistant-id, then the messages as a JSON array
	api POST /api/chat/completions "$(jq -nc --arg m "$MODEL" --arg c "$CHAT_ID" --arg id "$1" --arg s "$SESSION" --argjson msgs "$2" \
		'{model:$m, chat_id:$c, id:$id, session_id:$s, stream:false, messages:$msgs,
		  background_tasks:{title_generation:false, tags_generation:false, follow_up_generation:false}}')" >/dev/null
	for _ in $(seq 1 120); do
		content=$(api GET "/api/v1/chats/$CHAT_ID" | jq -r --arg id "$1" '.chat.history.messages[$id].content // ""')
		[ -n "$content" ] && { echo "assistant: $content"; return; }
		sleep 1
	done
	echo "no answer after 120 s" >&2
	exit 1
}
complete "$A1" '[{"role":"user","content":"What is the capital of France?"}]'

# 4. A follow-up turn: send only what changed — the previous assistant
#    message with the new user id in its childrenIds, the new user message,
#    a new empty assistant placeholder, the new currentId, and messages[].
#    Messages not sent are kept by the server.
CUR=$(api GET "/api/v1/chats/$CHAT_ID")
U2=$(uuid) A2=$(uuid) T=$(now)
PREV=$(jq -c --arg id "$A1" --arg u "$U2" '.chat.history.messages[$id] | .childrenIds = [$u]' <<<"$CUR")
USER2=$(jq -nc --arg id "$U2" --arg p "$A1" --arg a "$A2" --arg m "$MODEL" --argjson t "$T" \
	'{id:$id, parentId:$p, childrenIds:[$a], role:"user", content:"And of Italy?", timestamp:$t, models:[$m]}')
ASSIST2=$(jq -nc --arg id "$A2" --arg u "$U2" --arg m "$MODEL" --argjson t "$T" \
	'{id:$id, parentId:$u, childrenIds:[], role:"assistant", content:"", model:$m, modelName:$m, modelIdx:0, done:false, timestamp:$t}')
LIST=$(jq -c --argjson p "$PREV" --argjson u "$USER2" --argjson a "$ASSIST2" \
	'[.chat.history.messages[.chat.history.messages[$p.id].parentId], $p, $u, $a]' <<<"$CUR")
TURN=$(jq -nc --arg cur "$A2" --argjson p "$PREV" --argjson u "$USER2" --argjson a "$ASSIST2" --argjson l "$LIST" \
	'{chat:{history:{currentId:$cur, messages:{($p.id):$p, ($u.id):$u, ($a.id):$a}}, messages:$l}}')
api POST "/api/v1/chats/$CHAT_ID" "$TURN" >/dev/null

# The completion is asked with the full message list of the thread.
complete "$A2" "$(jq -c '[.[0:3][] | {role, content}]' <<<"$LIST")"

# 5. The whole tree: four messages, currentId on the last answer.
api GET "/api/v1/chats/$CHAT_ID" | jq '{id, title, currentId: .chat.history.currentId,
	messages: [.chat.history.messages[] | {id, role, parentId, childrenIds, content}]}'
