package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"hearth/llm"
)

// The reasoning-tag parser gives the same result however the text is cut
// into deltas.
func TestTagParserAnySplit(t *testing.T) {
	cases := []struct {
		in, content, reasoning string
		tags                   []tagPair
	}{
		{"<think>x</think>ok", "ok", "x", defaultReasoningTags},
		{"plain < text <b>", "plain < text <b>", "", defaultReasoningTags},
		{"a<thinking>deep</thinking>b", "ab", "deep", defaultReasoningTags},
		{"<|begin_of_thought|>t<|end_of_thought|>done", "done", "t", defaultReasoningTags},
		{"◁think▷w◁/think▷v", "v", "w", defaultReasoningTags},
		{"<think>never closed", "", "never closed", defaultReasoningTags},
		{"x <thin", "x <thin", "", defaultReasoningTags},
		{"<think>x</think>ok", "<think>x</think>ok", "", nil},
		{"[[r]]why[[/r]]because", "because", "why", []tagPair{{"[[r]]", "[[/r]]"}}},
		{"   ", "", "", defaultReasoningTags},
	}
	for _, c := range cases {
		for cut := 0; cut <= len(c.in); cut++ {
			for cut2 := cut; cut2 <= len(c.in); cut2 += 3 {
				acc := newAccumulator(c.tags, time.Now)
				acc.addContent(c.in[:cut])
				acc.addContent(c.in[cut:cut2])
				acc.addContent(c.in[cut2:])
				acc.finishAll()
				if acc.Content() != strings.TrimSpace(c.content) || acc.Reasoning() != c.reasoning {
					t.Fatalf("%q cut at %d,%d: content %q reasoning %q, want %q %q", c.in, cut, cut2, acc.Content(), acc.Reasoning(), c.content, c.reasoning)
				}
			}
		}
	}
}

func TestReasoningTagsParam(t *testing.T) {
	if got := reasoningTags(json.RawMessage("false")); got != nil {
		t.Errorf("false: %v", got)
	}
	if got := reasoningTags(json.RawMessage(`["<a>","</a>"]`)); len(got) != 1 || got[0].start != "<a>" {
		t.Errorf("custom: %v", got)
	}
	if got := reasoningTags(nil); len(got) != len(defaultReasoningTags) {
		t.Errorf("default: %v", got)
	}
}

// Tool-call fragments are merged by index; parallel calls keep their own
// items; output items are in order of appearance and all completed at the end.
func TestAccumulatorToolCalls(t *testing.T) {
	acc := newAccumulator(nil, time.Now)
	i0, i1 := 0, 1
	acc.apply(delta{content: "calling"})
	acc.apply(delta{toolCalls: []llm.ToolCall{{Index: &i0, ID: "c0", Function: llm.FunctionCall{Name: "a", Arguments: `{"x"`}}}})
	acc.apply(delta{toolCalls: []llm.ToolCall{{Index: &i1, ID: "c1", Function: llm.FunctionCall{Name: "b", Arguments: `{}`}}}})
	acc.apply(delta{toolCalls: []llm.ToolCall{{Index: &i0, Function: llm.FunctionCall{Arguments: `:1}`}}}})
	acc.finishAll()
	out := acc.Output()
	if len(out) != 3 || out[1].Name != "a" || *out[1].Arguments != `{"x":1}` || out[2].CallID != "c1" || acc.Content() != "calling" {
		b, _ := json.Marshal(out)
		t.Fatalf("output %s", b)
	}
	for _, it := range out {
		if it.Status != "completed" {
			t.Errorf("item %s status %s", it.ID, it.Status)
		}
	}
	if !strings.HasPrefix(out[0].ID, "msg_") || !strings.HasPrefix(out[1].ID, "fc_") {
		t.Errorf("ids %s %s", out[0].ID, out[1].ID)
	}
}
