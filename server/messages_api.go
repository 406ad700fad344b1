package server

import (
	"io"
	"log/slog"
	"net/http"

	"hearth/chat"
	"hearth/llm"
)

// The messages-format endpoints (COMPAT.md §7): POST /api/message and POST
// /api/v1/messages (an Anthropic SDK with base URL <server>/api appends
// /v1/messages). The body is converted to a chat-completions request
// (llm.MessagesToChat) and run through the same completion pipeline as POST
// /api/chat/completions, always in API-only mode (the conversion never
// produces chat_id/id), so whatever the pipeline applies there applies here;
// its OpenAI-format answer is converted back: a chat.completion with
// llm.ChatToMessagesResponse, an SSE stream with llm.StreamChatAsMessages,
// event by event as the pipeline produces them (an io.Pipe joins the two).
//
// Auth is the ordinary chain: Authorization: Bearer <jwt|key> or the custom
// API-key header (x-api-key by default; decision 30: it wins when present);
// anthropic-version and other Anthropic headers are ignored. An API key's
// endpoint restriction applies whichever header carried it.
//
// Errors follow Open WebUI, not Anthropic (COMPAT §7.2): {"detail": ...}
// with the pipeline's status (400 "Model not found" for an unknown or
// forbidden model, the provider's status and message for its refusals, 400
// for a body that is not a messages request). A failure after a stream has
// started ends it with an `error` event ({"type":"error","error":{"type":
// "api_error","message":...}}), which the Anthropic SDKs understand.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, err := llm.MessagesToChat(body)
	if err != nil {
		return errorf(http.StatusBadRequest, "%s", err.Error())
	}
	model := req.Model()
	id := ident(r)
	res, err := s.pipeline.Complete(r.Context(), chat.Request{
		Actor: id.actor,
		User:  chat.UserInfo{Name: id.user.Name, Timezone: id.user.Timezone},
		Body:  req.AppendJSON(nil),
	})
	if err != nil {
		return pipelineError(err)
	}
	if res.Stream == nil {
		out, cerr := llm.ChatToMessagesResponse(res.Body, llm.MessagesResponseOptions{Model: model})
		if cerr != nil {
			out = res.Body // not a completion: returned unchanged, as upstream
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Status)
		w.Write(out)
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(res.Stream(pw)) // nil → clean EOF
	}()
	err = llm.StreamChatAsMessages(w, llm.NewSSEReader(pr, llm.SSEOptions{}), llm.MessagesStreamOptions{Model: model})
	pr.CloseWithError(io.ErrClosedPipe) // unblocks the pipeline if we stopped reading early
	<-done
	if err != nil && r.Context().Err() == nil {
		s.log.WarnContext(r.Context(), "messages stream ended with an error", slog.String("request_id", requestID(r)),
			slog.Any("err", err))
	}
	return nil
}
