// Package realtime owns live connections to browsers (melody websockets at
// GET /ws): authentication of a connection, fan-out of events to every
// connection of a user, sequence numbers and catch-up for a running
// message, and the persistence of the short-named event types of SPEC.md
// §6. There is no package state: the server builds one Hub.
//
// # Connection and authentication
//
// Plain WebSocket (RFC 6455), one JSON object per text frame; binary frames
// are ignored. Open WebUI speaks Socket.IO here; Hearth's own client does
// not, so this is Hearth's format, modelled on Open WebUI's `events`
// payload (COMPAT.md §9.1).
//
// A connection is authenticated by either
//   - the handshake's credential, when the server accepts it: the `token`
//     cookie the browser sends by itself (or an Authorization: Bearer JWT
//     from a non-browser client). The cookie counts only when the page is
//     same-origin (Origin absent or equal to Host): another site's page
//     cannot ride on it (cross-site websocket hijacking);
//   - or the first client frame {"type":"auth","token":"<JWT>"}, from any
//     origin (the token proves itself). A client that holds its token
//     should always send it; the cookie is the fallback.
//
// Tokens in the URL (?token=) are not accepted: URLs end up in proxy and
// access logs and browser history. API keys (sk-…) are refused, as in Open
// WebUI: the live connection is for a signed-in browser; programs read
// the persisted events over HTTP. The token is verified as for HTTP (JWT
// signature and expiry, revocation list, the user must exist and be
// active) and the account must be "user" or "admin": a pending account
// gets no connection. Every connection's token is verified again every
// minute, so a signed-out, expired or deleted account stops receiving
// events within a minute.
//
// A socket that has not authenticated within 10 s, or that sends any other
// frame first, is closed with code 4001 "authentication required". Close
// codes: 4001 invalid, expired or missing token (do not retry with the
// same token); 4003 account not allowed (pending); 1011 the token could
// not be checked (retry later); 1001 server shutting down (reconnect).
// A second auth frame may refresh the token (same user only).
//
// # Server → client frames
//
//	{"type":"ready","user_id":"<id>"}
//	    authenticated; events flow from here on.
//	{"type":"events","seq":<n>,"chat_id":"<id>","message_id":"<id>",
//	 "data":{"type":"<event type>","data":<payload>}}
//	    one event (SPEC.md §6 types). seq is per (user, chat, message),
//	    1, 2, 3, … without gaps on a live connection; it is absent for
//	    events without a message id (not sequenced, not kept).
//	{"type":"resumed","chat_id":…,"message_id":…,"since":<n>,"seq":<last>,
//	 "found":<bool>,"truncated":<bool>,"done":<bool>,"events":[<events frame>…]}
//	    the answer to a resume: the kept events with seq > since, in order.
//	{"type":"heartbeat"}
//	    the answer to a heartbeat.
//	{"type":"error","detail":"…"}
//	    a malformed frame; the connection stays open.
//
// Every event of a user goes to all of that user's connections (Open
// WebUI's room user:<id>), whichever tab started the generation.
//
// # Client → server frames
//
//	{"type":"auth","token":"<JWT>"}
//	{"type":"heartbeat"}                  every ~30 s; marks the user active
//	{"type":"resume","chat_id":"<id>","message_id":"<id>","since":<seq>}
//
// # Catch-up
//
// A message's events are kept in memory while it generates: from its first
// event until 2 minutes after its end, or after 1 hour without events.
// The end is the first of: a chat:completion with "done": true,
// chat:tasks:cancel (stopped), chat:message:error (failed), chat:active
// with "active": false. A chat:completion with "content" and without done
// true, or chat:active with "active": true (a continued generation of the
// same message), clears the end mark. Afterwards only the last seq is remembered (1 hour), so later
// events of the same message continue the sequence.
//
// What is kept, exactly:
//  1. Supersession: a chat:completion event whose payload is an object is
//     dropped once a later chat:completion event of the same message
//     carries every top-level member it carried (its state is overwritten
//     by the later one: Hearth's pipeline sends the cumulative "content"
//     and "output" each time, as Open WebUI 0.9 does). Payloads with
//     "choices" (OpenAI-style deltas, which append) are never superseded.
//     Every other event type is kept.
//  2. Bounds: at most 10,000 events and 8 MiB of frames per message. Over
//     a bound, the oldest kept events are dropped, except the newest event
//     and the latest chat:completion carrying "content" (the snapshot). The
//     highest seq so dropped is the message's floor.
//  3. Over 256 MiB for all messages together, the least recently updated
//     messages are dropped whole (they answer found:false).
//
// A resume {since: S} answers, atomically with respect to live events of
// that message, every kept event with seq > S, in order, inside one
// `resumed` frame; every live event of that message sent to the connection
// after it is newer. Its seq is the last seq assigned to the message.
// found:false: nothing is kept (unknown message, finished more than 2
// minutes ago, dropped for memory, or the server restarted); seq is then
// the last seq the server remembers (0 if none). truncated:true: events
// between S and the first returned one were dropped (bounds, or the
// message was dropped and has started again); the snapshot restores the
// text, other fields (status history, sources, files, embeds) should be
// reloaded over HTTP. When S is above the message's last seq (a counter
// from before a server restart), the answer is for since 0 and says so
// (its since is 0).
//
// Client rule. Per message keep A, the highest applied seq (0 for a
// message first seen now). A live event with seq <= A: ignore. seq == A+1:
// apply, A = seq. seq > A+1 (a gap: the client reconnected or joined
// mid-generation): do not apply it; send resume {since: A} unless one is
// pending for that message. A `resumed` frame with found:true: if its
// since is below the since sent, set A to it (server restart); apply its
// events with seq > A in order (gaps are legitimate there: superseded
// completions); then A = max(A, seq). With found:false: reload the chat
// over HTTP and set A = seq. After a reconnect, resume every message that
// was generating. Resuming with since 0 after loading a chat over HTTP
// replays events whose persisted effect (below) the loaded message may
// already show; status, source, file and embed items that are already
// present should be skipped.
//
// # Persistence
//
// Hub.Emit never writes. Hub.PersistAndEmit first writes the short-named
// types to the stored message as the chat owner (SPEC.md §6 Persistence,
// COMPAT.md §9.3), then emits, even when no browser is connected: status →
// payload appended to statusHistory (history.currentId unchanged);
// message → data.content appended to content; replace → content set;
// embeds → data.embeds put first, or set when data.replace is truthy;
// files → data.files put first; source, citation → payload appended to
// sources, only without data.type (code-execution results are live-only).
// All but status move history.currentId to the message. A missing chat or
// message, a payload without the needed field, or a "local:" chat: nothing
// is written, the event is still emitted. The long aliases
// (chat:message:delta, chat:message, chat:message:files,
// chat:message:embeds) and all other types are emit-only.
//
// # Delivery guarantees
//
// Emit never blocks on a connection: each has a queue of 1024 frames; a
// connection whose queue overflows is dropped at once (no close frame,
// the client sees 1006) and should reconnect and resume. So a connection
// that stays open has received every event of the user, in seq order per
// message.
//
// # Replicas
//
// PubSub is the seam for several replicas (Redis later): the emitting hub
// sequences an event and publishes it; the other hubs record it under the
// same seq and send it to their connections, so a resume works on any
// replica. One producer per message is assumed (the replica running the
// generation); events posted to the event endpoint on another replica for
// a running message would need the sequence kept centrally (Redis INCR).
package realtime
