package chat

import (
	"reflect"
	"testing"
)

func TestBuildConnections(t *testing.T) {
	conns := BuildConnections(ConnectionSettings{
		EnableOllama: true,
		OllamaURLs:   []string{"http://a:11434/", "http://b:11434", "http://legacy:11434"},
		OllamaConfigs: map[string]any{
			"0":                   map[string]any{"prefix_id": "a", "tags": []any{"gpu", map[string]any{"name": "fast"}}, "key": "ok-key"},
			"1":                   map[string]any{"enable": false},
			"http://legacy:11434": map[string]any{"connection_type": "external", "model_ids": []any{"tiny:latest"}},
			"7":                   map[string]any{"prefix_id": "ignored"},
		},
		EnableOpenAI:  true,
		OpenAIURLs:    []string{"https://x.example/v1/", "", "https://y.example/v1"},
		OpenAIKeys:    []string{"k0", " k1 ", "k2", "extra"},
		OpenAIConfigs: map[string]any{"2": map[string]any{"key": "not-used", "headers": map[string]any{"X-A": "1"}, "auth_type": "none", "api_type": "responses", "provider": "llama.cpp"}},
	})
	if len(conns) != 6 {
		t.Fatalf("%d connections", len(conns))
	}
	a, b, legacy := conns[0], conns[1], conns[2]
	if a.Kind != KindOllama || a.Index != 0 || a.BaseURL != "http://a:11434" || a.PrefixID != "a" || !a.Enabled ||
		!reflect.DeepEqual(a.Tags, []string{"gpu", "fast"}) || a.Key != "ok-key" || a.ConnectionType != "local" {
		t.Errorf("ollama 0: %+v", a)
	}
	if b.Enabled || b.Index != 1 {
		t.Errorf("ollama 1 should be disabled: %+v", b)
	}
	if legacy.ConnectionType != "external" || !reflect.DeepEqual(legacy.ModelIDs, []string{"tiny:latest"}) {
		t.Errorf("legacy config by URL: %+v", legacy)
	}
	x, def, y := conns[3], conns[4], conns[5]
	if x.Kind != KindOpenAI || x.BaseURL != "https://x.example/v1" || x.Key != "k0" || x.ConnectionType != "external" || x.Index != 0 {
		t.Errorf("openai 0: %+v", x)
	}
	if def.BaseURL != DefaultOpenAIBaseURL || def.Key != "k1" {
		t.Errorf("empty URL: %+v", def)
	}
	if y.Key != "k2" || y.AuthType != "none" || y.APIType != "responses" || y.Provider != "llama.cpp" || y.Headers["X-A"] != "1" {
		t.Errorf("openai 2: %+v", y)
	}

	// Fewer keys than URLs: padded with "".
	conns = BuildConnections(ConnectionSettings{EnableOpenAI: true, OpenAIURLs: []string{"https://x/v1", "https://y/v1"}, OpenAIKeys: []string{"k"}})
	if conns[1].Key != "" || conns[0].Key != "k" {
		t.Errorf("padding: %+v", conns)
	}
	// An API switched off disables all its connections.
	conns = BuildConnections(ConnectionSettings{EnableOllama: false, OllamaURLs: []string{"http://a"}, EnableOpenAI: false, OpenAIURLs: []string{"https://x/v1"}})
	for _, c := range conns {
		if c.Enabled {
			t.Errorf("enabled although its API is off: %+v", c)
		}
	}
	if got := PadKeys([]string{"a", "b", "c"}, 2); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("PadKeys cut: %v", got)
	}
	if got := PadKeys(nil, 2); !reflect.DeepEqual(got, []string{"", ""}) {
		t.Errorf("PadKeys pad: %v", got)
	}
}

func TestSkipListing(t *testing.T) {
	for _, tc := range []struct {
		c    Connection
		skip bool
	}{
		{Connection{Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1"}, true},
		{Connection{Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1", Key: "sk-x"}, false},
		{Connection{Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1", ModelIDs: []string{"gpt-4o"}}, false},
		{Connection{Kind: KindOpenAI, BaseURL: "http://localhost:8000/v1"}, false},
		{Connection{Kind: KindOllama, BaseURL: "http://localhost:11434"}, false},
	} {
		if got := skipListing(tc.c); got != tc.skip {
			t.Errorf("skipListing(%+v) = %v", tc.c, got)
		}
	}
}
