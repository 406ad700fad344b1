// Package chat is the completion pipeline: resolve the model (records,
// base-model chains, access on every hop) → apply params and system prompts
// → call the upstream (llm) → relay or store the answer → background tasks
// (title, tags, follow-ups), with retrieval of the request's files and
// collections into the prompt (retrieval.go). Generations of stored chats
// run as server-side tasks that outlive the request; the task registry can
// list and stop them.
//
// Invariants:
//   - a model the caller may not use is indistinguishable from a missing one
//     ("Model not found");
//   - nothing is written per streamed token unless ENABLE_REALTIME_CHAT_SAVE;
//     a stored answer is written once when generation ends (done=true), and
//     a failed or stopped generation still ends with done=true;
//   - live events go through the Emitter; the pipeline never talks to
//     sockets itself;
//   - retrieval reads only what the actor may read, with access checked in
//     SQL, and only files whose processing completed; what it sends is
//     bounded by RAG_CONTEXT_MAX_CHARS.
package chat
