// Package llm owns Hearth's side of the model providers: the upstream clients
// (OpenAI-compatible connections and Ollama's native API) and the format conversions
// between chat-completions, Ollama, the messages format and the responses format, with
// the wire types and stream readers they need. It mirrors Open WebUI's
// routers/openai.py, routers/ollama.py, utils/payload.py, utils/response.py,
// utils/misc.py and utils/anthropic.py (COMPAT.md §4.5, §4.7, §5.1, §6, §7).
//
// It is a leaf: it imports only the standard library. It keeps no package-level mutable
// state and does not log (so it cannot log a prompt or a key); the only package-level
// values are sentinel errors (ErrStreamEndedEarly) and constant tables.
//
// # Pieces
//
//   - Wire types: ChatRequest (an ordered raw Object with typed accessors), ChatMessage,
//     ContentPart, ToolCall, ChatCompletion, ChatChunk, embeddings and model lists;
//     Ollama's /api/chat, /api/generate, /api/embed, /api/embeddings, /api/tags,
//     /api/version bodies.
//   - Stream readers: SSEReader (OpenAI-compatible event streams, with the
//     CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE semantics), NDJSONReader and
//     OllamaChatStream (Ollama).
//   - Conversions: ChatToOllama; OllamaToOpenAI / StreamOllamaAsOpenAI /
//     OllamaChatToOpenAI; NormalizeUsage; MessagesToChat, ChatToMessagesResponse,
//     MessagesStream / StreamChatAsMessages; ResponsesToChat, ChatToResponse;
//     OllamaEmbedToOpenAI, EmbeddingsToOllama; OllamaModelEntry,
//     OllamaTagsToOpenAIModels.
//   - Clients: OpenAIClient and OllamaClient, returning a Result (a whole body or an
//     unread stream) or an *UpstreamError for a status ≥ 400.
//
// # Invariants
//
//   - Streams are never buffered whole. Readers hold at most one line (bounded by
//     MaxLineSize when set) plus one read; converters hold per-stream state (ids, open
//     blocks, a tool call's arguments so far) and write each event as its input arrives.
//   - Unknown request fields pass through. A chat-completions request is an Object that
//     keeps every member, in order, as raw JSON; only the members a caller reads are
//     decoded. Relays forward upstream chunk bytes, not a re-encoding of ChatChunk.
//   - Conversions are pure: no I/O, no clock or randomness except through options (ids,
//     created time) that default to crypto/rand and time.Now; the same input and options
//     give the same bytes, which the goldens in testdata/golden pin.
//   - Stream readers never panic on bad input and never return garbage as data: a line
//     that is not SSE, or data that is not a JSON object, is skipped and counted; an
//     upstream error object mid-stream is a typed *UpstreamError (Status 0); a body that
//     ends without its terminator is ErrStreamEndedEarly, distinct from a clean io.EOF.
//   - Output JSON is compact, UTF-8, not HTML-escaped, with keys in a fixed order (see
//     jsonw.go). Upstream Open WebUI writes Python's `json.dumps` spacing; JSON clients do
//     not see the difference.
//   - Timeouts and cancellation come from the caller's context; clients never set their
//     own. Errors name a redacted URL, never a key or a body sent.
//
// # Where Hearth departs from Open WebUI 0.10.2 (each noted at its function)
//
// max_tokens and other top-level sampling parameters reach Ollama inside options (as
// upstream after #31437); Ollama finish_reason follows done_reason ("length"); Ollama tool
// calls without an index get a running index; messages-format usage and stop_reason
// follow current Open WebUI (cache-aware usage, input_tokens in message_delta) plus
// tool_use when tool calls ended with "stop"; messages responses always carry a msg_ id;
// tool arguments streamed before the tool's name are not lost; a failed or cut stream
// ends with an error event instead of a normal end; an oversized SSE line is one
// `data: {}` whether it arrived in one read or many (upstream 0.10.2 silently dropped a
// line that overflowed across reads and then relayed its tail).
package llm
