package server

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"

	"hearth/chat"
	"hearth/llm"
	"hearth/store"
)

// maxEmbeddingsAnswer bounds an upstream's embeddings answer.
const maxEmbeddingsAnswer = 256 << 20

// handleEmbeddings is POST /api/embeddings (+ /api/v1/embeddings): an
// OpenAI embeddings request {model, input: string | [string], ...} for any
// model the caller may use (COMPAT §6.5). The model is resolved like a
// completion's (unknown or forbidden → 400 "Model not found"); an Ollama
// connection gets POST <base>/api/embed {model, input[, dimensions]} and its
// answer converted to the OpenAI list ({"object":"list","data":[{"object":
// "embedding","embedding":[...],"index":i}],"model":...[,"usage"]}); an
// OpenAI-compatible connection gets the request as sent (model replaced by
// the upstream id) at <base>/embeddings with the connection's key, and its
// JSON answer is relayed. Hearth's addition: for an Ollama model,
// encoding_format "base64" (the OpenAI SDKs' default when the caller names
// none) gets base64 vectors (little-endian float32), as OpenAI answers;
// Open WebUI always answers float arrays there, which the Node SDK then
// mis-decodes. Upstream failures are {"detail": <provider
// message>} as for completions (401/403 of the provider become 400, a
// connection failure 502).
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	obj, err := llm.ParseObject(body)
	if err != nil {
		return errorf(http.StatusUnprocessableEntity, "Request body must be a JSON object")
	}
	model, _ := obj.GetString("model")
	if model == "" {
		return errorf(http.StatusBadRequest, "Model not found")
	}
	t, err := (pipelineResolver{s}).Resolve(r.Context(), actor(r), model)
	if err != nil {
		if errors.Is(err, chat.ErrModelNotFound) {
			return errorf(http.StatusBadRequest, "Model not found")
		}
		return err
	}
	input := obj.Get("input")
	if len(input) == 0 || string(input) == "null" {
		return errorf(http.StatusBadRequest, "input is required")
	}
	var hdr http.Header
	for k, v := range t.Conn.Headers {
		if !strings.Contains(v, "{{") { // per-user header templates are not supported yet
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr.Set(k, v)
		}
	}
	key := t.Conn.Key
	if t.Conn.AuthType == "none" {
		key = ""
	}
	var res *llm.Result
	if t.Conn.Kind == chat.KindOllama {
		var dims int
		if raw := obj.Get("dimensions"); len(raw) > 0 {
			json.Unmarshal(raw, &dims)
		}
		c := llm.NewOllamaClient(t.Conn.BaseURL, key, s.upstream)
		if hdr != nil {
			c.SetHeader(hdr)
		}
		res, err = c.Do(r.Context(), http.MethodPost, "api/embed",
			llm.EmbeddingsToOllama(&llm.EmbeddingsRequest{Model: t.UpstreamID, Input: input, Dimensions: dims}))
	} else {
		obj.SetString("model", t.UpstreamID)
		c := llm.NewOpenAIClient(t.Conn.BaseURL, key, s.upstream)
		if hdr != nil {
			c.SetHeader(hdr)
		}
		res, err = c.Do(r.Context(), http.MethodPost, "embeddings", obj)
	}
	if err != nil {
		return embeddingsFailure(err)
	}
	answer, err := embedAnswer(res)
	if err != nil {
		return embeddingsFailure(err)
	}
	if t.Conn.Kind == chat.KindOllama {
		if msg := llm.ErrorMessage(answer); msg != "" {
			return errorf(http.StatusBadRequest, "%s", msg)
		}
		if answer, err = llm.OllamaEmbedToOpenAI(answer); err != nil {
			return errorf(http.StatusBadGateway, "The model's answer is not an embeddings list")
		}
		if format, _ := obj.GetString("encoding_format"); format == "base64" {
			if answer, err = base64Vectors(answer); err != nil {
				return errorf(http.StatusBadGateway, "The model's answer is not an embeddings list")
			}
		}
	} else if !json.Valid(answer) {
		return errorf(http.StatusBadGateway, "The model's answer is not an embeddings list")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(answer)
	return nil
}

// base64Vectors rewrites each vector of an OpenAI embeddings list as
// OpenAI's base64 encoding (little-endian float32s).
func base64Vectors(list []byte) ([]byte, error) {
	var r llm.EmbeddingsResponse
	if err := json.Unmarshal(list, &r); err != nil {
		return nil, err
	}
	for i, e := range r.Data {
		v, err := llm.DecodeVector(e.Embedding)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
		}
		r.Data[i].Embedding = store.AppendJSONString(nil, base64.StdEncoding.EncodeToString(buf))
	}
	return json.Marshal(r)
}

// embedAnswer reads a pass-through Result whole (bounded).
func embedAnswer(res *llm.Result) ([]byte, error) {
	if !res.Streaming() {
		return res.Body, nil
	}
	defer res.Close()
	b, err := embedReadAll(res.Stream)
	return b, err
}

// embeddingsFailure maps an upstream failure like a completion's
// (chat's upstreamFailure): the provider's message with its status, its
// 401/403/407 as 400, a connection failure 502.
func embeddingsFailure(err error) error {
	var ue *llm.UpstreamError
	if errors.As(err, &ue) {
		status := ue.Status
		switch status {
		case 0, http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired:
			status = http.StatusBadRequest
		}
		if status < 400 || status > 599 {
			status = http.StatusBadRequest
		}
		return errorf(status, "%s", ue.Message)
	}
	if errors.Is(err, errEmbedTooLarge) {
		return errorf(http.StatusBadGateway, "The model's answer is too large")
	}
	return errorf(http.StatusBadGateway, "Open WebUI: Server Connection Error")
}

var errEmbedTooLarge = errors.New("embeddings answer too large")

// embedReadAll reads at most maxEmbeddingsAnswer bytes.
func embedReadAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxEmbeddingsAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxEmbeddingsAnswer {
		return nil, errEmbedTooLarge
	}
	return b, nil
}
