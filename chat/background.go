package chat

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"hearth/llm"
	"hearth/store"
)

// Background tasks after a stored answer (COMPAT.md §4.6): title, tags and
// follow-up suggestions, each asked of the task model with a prompt built
// from the conversation, its JSON answer parsed, stored and emitted.
// Requested per request in background_tasks and allowed by the
// ENABLE_*_GENERATION toggles.

// Built-in prompt templates, in Hearth's own words. {{MESSAGES:END:n}} is
// the last n messages of the conversation as "ROLE: content" lines.
const (
	defaultTitleTemplate = `### Task:
Give the conversation below a concise title of 3 to 5 words that captures its main subject, beginning with one fitting emoji.

### Guidelines:
- Use the language the conversation is mostly written in; use English if unsure.
- Write plain words: no quotation marks, no markdown, no ending punctuation.
- Prefer clarity over cleverness.
- Reply with this JSON object and nothing else: { "title": "🧭 Your title here" }

### Conversation:
<chat_history>
{{MESSAGES:END:2}}
</chat_history>`

	defaultTagsTemplate = `### Task:
Label the conversation below with 1 to 3 broad topics (for example Science, Technology, Health, Finance, Education, Entertainment) and 1 to 3 more specific subtopics.

### Guidelines:
- Prefer the language the conversation is mostly written in; use English if unsure.
- Keep each tag short: one to three words.
- If nothing fits, return ["General"].
- Reply with this JSON object and nothing else: { "tags": ["Topic", "Subtopic"] }

### Conversation:
<chat_history>
{{MESSAGES:END:6}}
</chat_history>`

	defaultFollowUpTemplate = `### Task:
Suggest 3 to 5 questions the user could naturally ask next, given the conversation below.

### Guidelines:
- Write each question from the user's point of view, addressed to the assistant.
- Keep them short, specific and directly related to what was discussed; do not repeat what was already answered.
- Use the language the conversation is written in.
- Reply with this JSON object and nothing else: { "follow_ups": ["First question?", "Second question?", "Third question?"] }

### Conversation:
<chat_history>
{{MESSAGES:END:6}}
</chat_history>`
)

// defaultTaskMaxTokens bounds a task answer when the model sets no max_tokens.
const defaultTaskMaxTokens = 1000

// convMessage is one message of the conversation given to a task.
type convMessage struct {
	Role    string
	Content string
}

// background runs the requested tasks. Failures are logged, never fatal:
// the answer is already stored.
func (g *generation) background(ctx context.Context) {
	bg := g.pr.meta.Background
	if !g.persist || bg == nil {
		return
	}
	titleAsked, title := boolMember(bg, "title_generation")
	_, tags := boolMember(bg, "tags_generation")
	_, followUps := boolMember(bg, "follow_up_generation")
	title = title && g.s.EnableTitle
	tags = tags && g.s.EnableTags
	followUps = followUps && g.s.EnableFollowUps
	if !titleAsked && !tags && !followUps {
		return
	}
	conv, err := g.conversation(ctx, g.historyNeeded(titleAsked, tags, followUps))
	if err != nil {
		g.p.log.Warn("background tasks: reading the chat failed", slog.String("chat_id", g.chatID), slog.Any("err", err))
		return
	}
	var tt *Target
	if title || tags || followUps {
		tt = g.p.taskTarget(ctx, g.actor, g.target, g.s)
	}

	if titleAsked {
		var t string
		if title {
			if obj, ok := g.task(ctx, tt, g.s.TitleTemplate, defaultTitleTemplate, conv); ok {
				json.Unmarshal(obj["title"], &t)
			}
			t = strings.TrimSpace(t)
			if t == "" && len(conv) > 0 {
				t = conv[0].Content // upstream's fallback
			}
		} else if len(conv) == 2 {
			// Title generation off: a chat's first exchange is named after
			// the user's message (COMPAT §16 row 27).
			t = conv[0].Content
		}
		if t != "" && ctx.Err() == nil {
			g.setTitle(ctx, t)
		}
	}
	if tags && ctx.Err() == nil {
		if obj, ok := g.task(ctx, tt, g.s.TagsTemplate, defaultTagsTemplate, conv); ok {
			var list []string
			if json.Unmarshal(obj["tags"], &list) == nil {
				g.setTags(ctx, list)
			}
		}
	}
	if followUps && ctx.Err() == nil {
		if obj, ok := g.task(ctx, tt, g.s.FollowUpTemplate, defaultFollowUpTemplate, conv); ok {
			var list []string
			if json.Unmarshal(obj["follow_ups"], &list) == nil {
				g.setFollowUps(ctx, list)
			}
		}
	}
}

func (g *generation) setTitle(ctx context.Context, title string) {
	b, _ := json.Marshal(map[string]string{"title": title})
	patch, err := store.ParseChat(b)
	if err == nil {
		err = g.p.o.Store.UpdateChat(ctx, g.actor, g.chatID, patch)
	}
	if err != nil {
		g.p.log.Warn("storing the generated title failed", slog.String("chat_id", g.chatID), slog.Any("err", err))
		return
	}
	g.emit("chat:title", title)
}

func (g *generation) setTags(ctx context.Context, list []string) {
	names := []string{}
	for _, name := range list {
		name = strings.TrimSpace(name)
		if id := store.NormalizeTagID(name); id == "" || id == "none" || len(name) > 256 {
			continue
		}
		if _, err := g.p.o.Store.AddChatTag(ctx, g.actor, g.chatID, name); err != nil {
			g.p.log.Warn("storing a generated tag failed", slog.String("chat_id", g.chatID), slog.Any("err", err))
			return
		}
		names = append(names, name)
	}
	g.emit("chat:tags", names)
}

func (g *generation) setFollowUps(ctx context.Context, list []string) {
	clean := []string{}
	for _, q := range list {
		if q = strings.TrimSpace(q); q != "" {
			clean = append(clean, q)
		}
	}
	b, _ := marshalJSON(clean)
	err := g.p.o.Store.EditMessage(ctx, g.actor, g.chatID, g.msgID, store.MessageEdit{
		Set: map[string]json.RawMessage{"followUps": b},
	})
	if err != nil {
		g.p.log.Warn("storing follow-ups failed", slog.String("chat_id", g.chatID), slog.Any("err", err))
		return
	}
	g.emit("chat:message:follow_ups", map[string]any{"follow_ups": clean})
}

// task asks the task model one templated question and returns the JSON
// object of its answer (the text between the first `{` and the last `}`).
func (g *generation) task(ctx context.Context, t *Target, tmpl, def string, conv []convMessage) (map[string]json.RawMessage, bool) {
	if tmpl == "" {
		tmpl = def
	}
	prompt := renderTemplate(tmpl, conv)
	text, err := g.p.ask(ctx, t, prompt)
	if err != nil {
		if ctx.Err() == nil {
			g.p.log.Warn("background task failed", slog.String("chat_id", g.chatID), slog.Any("err", err))
		}
		return nil, false
	}
	obj, ok := parseTaskJSON(text)
	return obj, ok
}

// parseTaskJSON decodes the object between the first `{` and the last `}`.
func parseTaskJSON(text string) (map[string]json.RawMessage, bool) {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text[i:j+1]), &obj) != nil {
		return nil, false
	}
	return obj, true
}

// ask sends one non-streaming task request: the prompt as the only user
// message, the model's params, max_tokens (Ollama; max_completion_tokens for
// api.openai.com) = the model's max_tokens or 1000. It returns the answer
// text without reasoning, or the reasoning when the text is empty.
func (p *Pipeline) ask(ctx context.Context, t *Target, prompt string) (string, error) {
	var body llm.Object
	body.SetString("model", t.UpstreamID)
	msgs, _ := json.Marshal([]map[string]string{{"role": "user", "content": prompt}})
	body.Set("messages", msgs)
	body.SetBool("stream", false)
	var params llm.Object
	for _, m := range t.Params.Members() {
		if string(m.Value) != "null" {
			params.Set(m.Key, m.Value)
		}
	}
	for _, k := range pipelineOnlyParams {
		params.Delete(k)
	}
	maxTokens := json.RawMessage(strconv.Itoa(defaultTaskMaxTokens))
	if v := params.Delete("max_tokens"); v != nil {
		maxTokens = v
	}
	if t.Conn.Kind == KindOllama {
		if params.Len() > 0 {
			body.Set("options", params.AppendJSON(nil))
		}
		body.Set("max_tokens", maxTokens)
	} else {
		for _, m := range params.Members() {
			body.Set(m.Key, m.Value)
		}
		if strings.Contains(t.Conn.BaseURL, "api.openai.com") {
			body.Set("max_completion_tokens", maxTokens)
		} else {
			body.Set("max_tokens", maxTokens)
		}
	}
	res, err := p.callUpstream(ctx, t, &llm.ChatRequest{Object: body})
	if err != nil {
		return "", err
	}
	defer res.Close()
	acc := newAccumulator(defaultReasoningTags, p.o.Now)
	if res.Streaming() {
		src := newSource(res.Stream, t.Conn.Kind, 0)
		for {
			d, err := src.next()
			if err != nil {
				if err == io.EOF {
					break
				}
				return "", err
			}
			acc.apply(d)
		}
	} else {
		b, err := completionBody(res.Body, t.Conn.Kind)
		if err != nil {
			return "", err
		}
		var c llm.ChatCompletion
		if err := json.Unmarshal(b, &c); err != nil {
			return "", err
		}
		if len(c.Choices) > 0 {
			m := c.Choices[0].Message
			r := m.ReasoningContent
			if r == "" {
				r = m.Reasoning
			}
			acc.apply(delta{content: m.Text(), reasoning: r})
		}
	}
	acc.finishAll()
	if text := acc.Content(); strings.Contains(text, "{") {
		return text, nil
	}
	return acc.Reasoning(), nil
}

// taskTarget picks the task model (COMPAT §4.6, utils/task.py
// get_task_model_id): for a chat model on a "local" connection TASK_MODEL,
// for others TASK_MODEL_EXTERNAL, each when set and usable by the actor;
// otherwise the chat model itself. A connection without a type counts as
// local when it is Ollama.
func (p *Pipeline) taskTarget(ctx context.Context, actor store.Actor, chatModel *Target, s Settings) *Target {
	local := chatModel.Conn.ConnectionType == "local" || (chatModel.Conn.ConnectionType == "" && chatModel.Conn.Kind == KindOllama)
	id := s.TaskModelExternal
	if local {
		id = s.TaskModel
	}
	if id != "" && p.o.Resolver != nil {
		if t, err := p.o.Resolver.Resolve(ctx, actor, id); err == nil {
			return t
		}
	}
	return chatModel
}

// historyNeeded is how many messages, counted back from the answer, the
// tasks that will run can use (0 = all): a title falls back to the first
// message and a title-less chat checks for exactly two messages, so titles
// read the whole path; otherwise the templates decide (messagesWindow).
// Open WebUI's client asks for titles on a chat's first turn only, so the
// usual cost is the last few messages, not the chat.
func (g *generation) historyNeeded(title, tags, followUps bool) int {
	if title {
		return 0
	}
	need := 0
	for _, t := range []struct {
		on        bool
		tmpl, def string
	}{{tags, g.s.TagsTemplate, defaultTagsTemplate}, {followUps, g.s.FollowUpTemplate, defaultFollowUpTemplate}} {
		if !t.on {
			continue
		}
		tmpl := t.tmpl
		if tmpl == "" {
			tmpl = t.def
		}
		n := messagesWindow(tmpl)
		if n == 0 {
			return 0
		}
		need = max(need, n)
	}
	return need
}

// messagesWindow is how many trailing messages a template renders: the
// largest n of its {{MESSAGES:END:n}}, at least 2 for {{prompt}} (the
// answer's own user message); 0 (all) when it renders {{MESSAGES}},
// START or MIDDLETRUNCATE, which need the beginning of the conversation.
func messagesWindow(tmpl string) int {
	n := 2
	for _, m := range messagesRe.FindAllStringSubmatch(tmpl, -1) {
		if m[1] != "END" {
			return 0
		}
		k, _ := strconv.Atoi(m[2])
		n = max(n, k)
	}
	return n
}

// conversation is the stored path to the answer (its last `limit`
// messages; 0 = from the first message), with <details> blocks and
// markdown images removed from the text.
func (g *generation) conversation(ctx context.Context, limit int) ([]convMessage, error) {
	path, err := g.p.o.Store.MessagePath(ctx, g.actor, g.chatID, g.msgID, limit)
	if err != nil {
		return nil, err
	}
	conv := make([]convMessage, 0, len(path))
	for _, m := range path {
		var body struct {
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m.Body, &body)
		conv = append(conv, convMessage{Role: m.Role, Content: cleanText(contentText(body.Content))})
	}
	return conv, nil
}

// contentText is a message content's text: the string, or its text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

var (
	detailsRe  = regexp.MustCompile(`(?s)<details\b[^>]*>.*?</details>`)
	mdImageRe  = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	messagesRe = regexp.MustCompile(`\{\{MESSAGES(?::(START|END|MIDDLETRUNCATE):(\d+))?\}\}`)
)

func cleanText(s string) string {
	if strings.Contains(s, "<details") {
		s = detailsRe.ReplaceAllString(s, "")
	}
	if strings.Contains(s, "![") {
		s = mdImageRe.ReplaceAllString(s, "")
	}
	return strings.TrimSpace(s)
}

// renderTemplate fills {{MESSAGES}}, {{MESSAGES:START:n}},
// {{MESSAGES:END:n}}, {{MESSAGES:MIDDLETRUNCATE:n}} and {{prompt}} (the
// last user message).
func renderTemplate(tmpl string, conv []convMessage) string {
	out := messagesRe.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := messagesRe.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		sel := conv
		switch sub[1] {
		case "START":
			sel = conv[:min(n, len(conv))]
		case "END":
			sel = conv[max(0, len(conv)-n):]
		case "MIDDLETRUNCATE":
			if len(conv) > n {
				half := n / 2
				sel = append(append([]convMessage{}, conv[:n-half]...), conv[len(conv)-half:]...)
			}
		}
		lines := make([]string, 0, len(sel))
		for _, c := range sel {
			lines = append(lines, strings.ToUpper(c.Role)+": "+c.Content)
		}
		return strings.Join(lines, "\n")
	})
	if strings.Contains(out, "{{prompt}}") {
		last := ""
		for i := len(conv) - 1; i >= 0; i-- {
			if conv[i].Role == "user" {
				last = conv[i].Content
				break
			}
		}
		out = strings.ReplaceAll(out, "{{prompt}}", last)
	}
	return out
}
