package llm

import (
	"encoding/json"
	"math"
	"strconv"
)

// NormalizeUsage returns a provider's usage object with its original members kept and
// input_tokens, output_tokens and total_tokens set (COMPAT §4.7, utils/response.py
// normalize_usage): input from input_tokens, prompt_tokens, prompt_eval_count (Ollama) or
// prompt_n (llama.cpp); output from output_tokens, completion_tokens, eval_count or
// predicted_n; total from total_tokens, else input + output. As upstream, the first
// non-zero source wins. A usage that is absent, null or not an object gives an empty
// object.
func NormalizeUsage(usage json.RawMessage) Object {
	var o Object
	if len(usage) == 0 || usage[0] != '{' || o.UnmarshalJSON(usage) != nil {
		return Object{}
	}
	if o.Len() == 0 {
		return o
	}
	in := firstCount(o, "input_tokens", "prompt_tokens", "prompt_eval_count", "prompt_n")
	out := firstCount(o, "output_tokens", "completion_tokens", "eval_count", "predicted_n")
	total := firstCount(o, "total_tokens")
	if total == 0 {
		total = in + out
	}
	o.SetInt("input_tokens", in)
	o.SetInt("output_tokens", out)
	o.SetInt("total_tokens", total)
	return o
}

// firstCount returns the first non-zero numeric member among keys (0 when none).
func firstCount(o Object, keys ...string) int64 {
	for _, k := range keys {
		if n, ok := numberValue(o.Get(k)); ok && n != 0 {
			return n
		}
	}
	return 0
}

// numberValue parses a raw JSON number (truncating a fraction).
func numberValue(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(f), true
}

// appendOllamaUsage appends the usage object Open WebUI builds from an Ollama `done`
// line (COMPAT §6.5, utils/response.py convert_ollama_usage_to_openai), in its key order.
func appendOllamaUsage(dst []byte, r *OllamaChatResponse) []byte {
	in, out := r.PromptEvalCount, r.EvalCount
	dst = append(dst, `{"input_tokens":`...)
	dst = appendInt(dst, in)
	dst = append(dst, `,"output_tokens":`...)
	dst = appendInt(dst, out)
	dst = append(dst, `,"total_tokens":`...)
	dst = appendInt(dst, in+out)
	dst = append(dst, `,"prompt_tokens":`...)
	dst = appendInt(dst, in)
	dst = append(dst, `,"completion_tokens":`...)
	dst = appendInt(dst, out)
	dst = append(dst, `,"response_token/s":`...)
	dst = appendRate(dst, out, r.EvalDuration)
	dst = append(dst, `,"prompt_token/s":`...)
	dst = appendRate(dst, in, r.PromptEvalDuration)
	dst = append(dst, `,"total_duration":`...)
	dst = appendInt(dst, r.TotalDuration)
	dst = append(dst, `,"load_duration":`...)
	dst = appendInt(dst, r.LoadDuration)
	dst = append(dst, `,"prompt_eval_count":`...)
	dst = appendInt(dst, in)
	dst = append(dst, `,"prompt_eval_duration":`...)
	dst = appendInt(dst, r.PromptEvalDuration)
	dst = append(dst, `,"eval_count":`...)
	dst = appendInt(dst, out)
	dst = append(dst, `,"eval_duration":`...)
	dst = appendInt(dst, r.EvalDuration)
	dst = append(dst, `,"approximate_total":"`...)
	s := r.TotalDuration / 1_000_000_000
	dst = appendInt(dst, s/3600)
	dst = append(dst, 'h')
	dst = appendInt(dst, s%3600/60)
	dst = append(dst, 'm')
	dst = appendInt(dst, s%60)
	dst = append(dst, `s","completion_tokens_details":{"reasoning_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
	return dst
}

// appendRate appends tokens per second rounded to 2 decimals, or "N/A" without a
// duration (upstream's `response_token/s` / `prompt_token/s`).
func appendRate(dst []byte, count, durationNS int64) []byte {
	if durationNS <= 0 {
		return append(dst, `"N/A"`...)
	}
	rate := float64(count) / (float64(durationNS) / 1e9)
	return appendPyFloat(dst, math.Round(rate*100)/100)
}

// messagesUsage is the usage block of a messages-format answer, derived from an
// OpenAI-shaped usage the way current Open WebUI derives it (open-webui/tests
// integration/chat/test_anthropic_usage_reporting.py): Anthropic's input_tokens excludes
// cached tokens, so cache reads (cache_read_input_tokens, else
// prompt_tokens_details.cached_tokens) and cache writes are subtracted from prompt_tokens
// and reported beside it; a provider already using Anthropic's keys is taken as is; the
// detail members output_tokens_details, server_tool_use (objects) and service_tier (a
// string) are kept. countedInput fills a missing input count (0 when unknown).
type messagesUsage struct {
	input, output             int64
	cacheCreation, cacheRead  int64
	hasCreation, hasCacheRead bool
	outputDetails             json.RawMessage
	serverToolUse             json.RawMessage
	serviceTier               json.RawMessage
}

func deriveMessagesUsage(raw json.RawMessage, countedInput int64) messagesUsage {
	u := messagesUsage{input: countedInput}
	var o Object
	if len(raw) == 0 || raw[0] != '{' || o.UnmarshalJSON(raw) != nil {
		return u
	}
	num := func(k string) (int64, bool) { return numberValue(o.Get(k)) }

	if n, ok := num("cache_creation_input_tokens"); ok {
		u.cacheCreation, u.hasCreation = n, true
	}
	if n, ok := num("cache_read_input_tokens"); ok {
		u.cacheRead, u.hasCacheRead = n, true
	} else if d := o.Get("prompt_tokens_details"); len(d) > 0 && d[0] == '{' {
		var details Object
		if details.UnmarshalJSON(d) == nil {
			if n, ok := numberValue(details.Get("cached_tokens")); ok && n > 0 {
				u.cacheRead, u.hasCacheRead = n, true
			}
		}
	}

	switch {
	case o.Has("anthropic_input_tokens"):
		u.input, _ = num("anthropic_input_tokens")
	case isNumber(o.Get("prompt_tokens")):
		p, _ := num("prompt_tokens")
		u.input = max(p-u.cacheRead-u.cacheCreation, 0)
	case isNumber(o.Get("input_tokens")):
		u.input, _ = num("input_tokens")
	}
	switch {
	case o.Has("anthropic_output_tokens"):
		u.output, _ = num("anthropic_output_tokens")
	case isNumber(o.Get("completion_tokens")):
		u.output, _ = num("completion_tokens")
	default:
		u.output, _ = num("output_tokens")
	}
	if v := o.Get("output_tokens_details"); len(v) > 0 && v[0] == '{' {
		u.outputDetails = v
	}
	if v := o.Get("server_tool_use"); len(v) > 0 && v[0] == '{' {
		u.serverToolUse = v
	}
	if v := o.Get("service_tier"); len(v) > 0 && v[0] == '"' {
		u.serviceTier = v
	}
	return u
}

func isNumber(raw json.RawMessage) bool {
	_, ok := numberValue(raw)
	return ok
}

func (u *messagesUsage) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = appendInt(dst, u.input)
	dst = append(dst, `,"output_tokens":`...)
	dst = appendInt(dst, u.output)
	if u.hasCreation {
		dst = append(dst, `,"cache_creation_input_tokens":`...)
		dst = appendInt(dst, u.cacheCreation)
	}
	if u.hasCacheRead {
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = appendInt(dst, u.cacheRead)
	}
	if u.outputDetails != nil {
		dst = append(dst, `,"output_tokens_details":`...)
		dst = append(dst, u.outputDetails...)
	}
	if u.serverToolUse != nil {
		dst = append(dst, `,"server_tool_use":`...)
		dst = append(dst, u.serverToolUse...)
	}
	if u.serviceTier != nil {
		dst = append(dst, `,"service_tier":`...)
		dst = append(dst, u.serviceTier...)
	}
	return append(dst, '}')
}
