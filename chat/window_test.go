package chat

import "testing"

func TestMessagesWindow(t *testing.T) {
	for tmpl, want := range map[string]int{
		"no history":         2,
		"{{prompt}}":         2,
		"{{MESSAGES:END:6}}": 6,
		"{{MESSAGES:END:1}} and {{MESSAGES:END:4}}": 4,
		"{{MESSAGES}}":         0,
		"{{MESSAGES:START:3}}": 0,
		"{{MESSAGES:END:2}} {{MESSAGES:MIDDLETRUNCATE:8}}": 0,
		defaultTagsTemplate:     6,
		defaultFollowUpTemplate: 6,
	} {
		if got := messagesWindow(tmpl); got != want {
			t.Errorf("messagesWindow(%q) = %d, want %d", tmpl, got, want)
		}
	}
	g := &generation{}
	if n := g.historyNeeded(true, true, true); n != 0 {
		t.Errorf("with a title: %d, want the whole path", n)
	}
	if n := g.historyNeeded(false, false, true); n != 6 {
		t.Errorf("follow-ups only: %d", n)
	}
	g.s.TagsTemplate = "{{MESSAGES}}"
	if n := g.historyNeeded(false, true, true); n != 0 {
		t.Errorf("custom tags template with {{MESSAGES}}: %d", n)
	}
}
