package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"hearth/ingest"
	"hearth/store"
)

// Messages of the file routes (COMPAT.md §1.3, §8.2).
const (
	msgInvalidMetadata = "[ERROR: Invalid metadata format]"
	msgUploadFailed    = "[ERROR: Error uploading file]"
	msgEmptyFile       = "The uploaded file is empty."
	msgNoFilePart      = "A multipart/form-data body with a \"file\" field is required"
)

// msgFileTooLarge is Open WebUI's FILE_TOO_LARGE(size).
func msgFileTooLarge(size string) string {
	return "Oops! The file you're trying to upload is too large. Please upload a file that is less than " + size + "."
}

// filesPerPage is the page size of GET /api/v1/files/ (COMPAT.md §8.3).
const filesPerPage = 50

// maxMetadataPart bounds the `metadata` form field.
const maxMetadataPart = 64 << 10

// initFiles builds the processing queue. Its workers stop with ctx (the
// file being processed stays pending and is resumed at the next start).
func (s *Server) initFiles(ctx context.Context, d Deps) error {
	s.ingest = ingest.New(ingest.Options{Store: d.Store, Indexer: s.vindex, Log: s.log, Context: ctx})
	return s.ingest.Start(ctx)
}

// embedConfig is the embedding and chunking configuration now
// (COMPAT.md §8.4): RAG_OLLAMA_BASE_URL defaults to the first Ollama
// connection, RAG_OPENAI_API_BASE_URL and its key to the first OpenAI one.
func (s *Server) embedConfig() ingest.EmbedConfig {
	c := s.cfg()
	ec := ingest.EmbedConfig{
		Engine: c.RAGEmbeddingEngine, Model: c.RAGEmbeddingModel, BatchSize: c.RAGEmbeddingBatchSize,
		Bypass: c.BypassEmbeddingAndRetrieval, ChunkSize: c.ChunkSize, ChunkOverlap: c.ChunkOverlap,
		MarkdownHeaders: c.EnableMarkdownHeaderSplit,
	}
	switch ec.Engine {
	case "ollama":
		ec.BaseURL, ec.Key = c.RAGOllamaBaseURL, c.RAGOllamaAPIKey
		if ec.BaseURL == "" && len(c.OllamaBaseURLs) > 0 {
			ec.BaseURL = c.OllamaBaseURLs[0]
		}
	case "openai":
		ec.BaseURL, ec.Key = c.RAGOpenAIAPIBaseURL, c.RAGOpenAIAPIKey
		if ec.BaseURL == "" && len(c.OpenAIAPIBaseURLs) > 0 {
			ec.BaseURL = c.OpenAIAPIBaseURLs[0]
			if ec.Key == "" && len(c.OpenAIAPIKeys) > 0 {
				ec.Key = c.OpenAIAPIKeys[0]
			}
		}
	}
	ec.BaseURL = strings.TrimRight(ec.BaseURL, "/")
	return ec
}

// fileJSON is Open WebUI's FileModel; data is assembled from the stored
// status, error and (when loaded) content.
type fileJSON struct {
	ID        string          `json:"id"`
	UserID    string          `json:"user_id"`
	Hash      *string         `json:"hash"`
	Filename  string          `json:"filename"`
	Data      map[string]any  `json:"data"`
	Meta      json.RawMessage `json:"meta"`
	CreatedAt int64           `json:"created_at"`
	UpdatedAt int64           `json:"updated_at"`
}

func fileRecord(f store.File) fileJSON {
	out := fileJSON{ID: f.ID, UserID: f.UserID, Filename: f.Filename, Data: map[string]any{}, Meta: f.Meta,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if f.Hash != "" {
		out.Hash = &f.Hash
	}
	if f.Status != "" {
		out.Data["status"] = f.Status
	}
	if f.Error != "" {
		out.Data["error"] = f.Error
	}
	if f.Content != nil {
		out.Data["content"] = *f.Content
	}
	return out
}

// queryBoolDefault is queryBool with a default for an absent parameter.
func queryBoolDefault(r *http.Request, name string, def bool) (bool, error) {
	if r.URL.Query().Get(name) == "" {
		return def, nil
	}
	return queryBool(r, name)
}

// baseName is the file's base name as Open WebUI keeps it: no directory
// part from either kind of separator.
func baseName(name string) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	return strings.TrimSpace(name)
}

// handleUploadFile is POST /api/v1/files/ (COMPAT.md §8.2): the `file`
// part streams into the store piece by piece (never whole in memory);
// `metadata` may come before or after it. A failed or refused upload
// leaves nothing behind. With process (default true) the file is queued
// (process_in_background, default true) or processed before answering.
func (s *Server) handleUploadFile(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	process, err := queryBoolDefault(r, "process", true)
	if err != nil {
		return err
	}
	background, err := queryBoolDefault(r, "process_in_background", true)
	if err != nil {
		return err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return errorf(http.StatusUnprocessableEntity, msgNoFilePart)
	}
	var limit int64
	limitText := ""
	if mb, set := s.cfg().RAGFileMaxSize.Limit(); set && mb > 0 {
		limit, limitText = int64(mb)<<20, fmt.Sprintf("%d MB", mb)
	}
	ctx := r.Context()
	var up *store.FileUpload
	defer func() {
		if up != nil {
			if err := up.Abort(ctx); err != nil {
				s.log.Warn("removing a failed upload", "err", err)
			}
		}
	}()
	var filename, contentType string
	metadata := json.RawMessage("{}")
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadReadError(&bodyError{err}, limitText)
		}
		switch {
		case part.FormName() == "file" && up == nil:
			filename = baseName(part.FileName())
			if filename == "" {
				filename = "file"
			}
			contentType = part.Header.Get("Content-Type")
			up, err = s.store.NewFileUpload(ctx, a, uuid.NewString(), filename, limit)
			if err != nil {
				return err
			}
			if _, err := up.Write(ctx, bodyReader{part}); err != nil {
				return uploadReadError(err, limitText)
			}
		case part.FormName() == "metadata":
			if metadata, err = readMetadata(part); err != nil {
				return err
			}
		default:
			if _, err := io.Copy(io.Discard, bodyReader{part}); err != nil {
				return uploadReadError(err, limitText)
			}
		}
	}
	if up == nil {
		return errorf(http.StatusUnprocessableEntity, msgNoFilePart)
	}
	if up.Size() == 0 {
		return errorf(http.StatusBadRequest, msgEmptyFile)
	}
	meta := map[string]any{"name": filename, "content_type": nil, "size": up.Size(), "file_hash": up.SHA256(), "data": metadata}
	if contentType != "" {
		meta["content_type"] = contentType
	}
	var md map[string]any
	if json.Unmarshal(metadata, &md) == nil {
		if h, ok := md["file_hash"].(string); ok && h != "" {
			meta["file_hash"] = h
		}
	}
	status := ""
	if process {
		status = store.FilePending
	}
	f, err := up.Commit(ctx, encodeJSON(meta), status)
	if err != nil {
		return err
	}
	up = nil
	if !process {
		return ok(w, fileRecord(f))
	}
	job := ingest.Job{FileID: f.ID, Owner: a}
	if background {
		s.ingest.Submit(job)
	} else {
		if err := s.ingest.Process(ctx, job); err != nil && ctx.Err() != nil {
			return err
		}
		if f, err = s.store.GetFile(ctx, a, f.ID, true); err != nil {
			return err
		}
	}
	// Open WebUI answers {"status": true, ...file} when it processes.
	return ok(w, struct {
		Status bool `json:"status"`
		fileJSON
	}{true, fileRecord(f)})
}

// uploadReadError maps a failure while reading the body: too large is
// 413, a broken body 400; a store failure stays an internal error.
func uploadReadError(err error, limitText string) error {
	var be *bodyError
	switch {
	case errors.Is(err, store.ErrTooLarge):
		return &apiError{status: http.StatusRequestEntityTooLarge, detail: msgFileTooLarge(limitText)}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &be):
		return errorf(http.StatusBadRequest, msgUploadFailed)
	}
	return err
}

// bodyError marks a failure of reading the request body (as opposed to
// storing it).
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "reading the upload: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// bodyReader tags the errors of a multipart part as bodyError.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &bodyError{err}
	}
	return n, err
}

// readMetadata reads the `metadata` form field: a JSON object, or a JSON
// string holding one (Open WebUI accepts both).
func readMetadata(part *multipart.Part) (json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxMetadataPart+1))
	if err != nil || len(b) > maxMetadataPart {
		return nil, errorf(http.StatusBadRequest, msgInvalidMetadata)
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) == nil && obj != nil {
		return b, nil
	}
	var str string
	if json.Unmarshal(b, &str) == nil && json.Unmarshal([]byte(str), &obj) == nil && obj != nil {
		return json.RawMessage(str), nil
	}
	return nil, errorf(http.StatusBadRequest, msgInvalidMetadata)
}

// fileNotFound is every refusal of a file route: missing and not
// readable look the same (COMPAT.md §1.4 "Files").
func fileNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return err
}

// handleListFiles is GET /api/v1/files/?page=&content= : the caller's
// files (an admin's: everyone's), 50 per page, {items, total}.
func (s *Server) handleListFiles(w http.ResponseWriter, r *http.Request) error {
	page, _, err := queryPage(r)
	if err != nil {
		return err
	}
	content, err := queryBoolDefault(r, "content", true)
	if err != nil {
		return err
	}
	a := actor(r)
	files, total, err := s.store.ListFiles(r.Context(), a, store.FileFilter{All: a.IsAdmin(), WithContent: content,
		Limit: filesPerPage, Offset: (page - 1) * filesPerPage})
	if err != nil {
		return err
	}
	items := make([]fileJSON, len(files))
	for i, f := range files {
		items[i] = fileRecord(f)
	}
	return ok(w, map[string]any{"items": items, "total": total})
}

// handleGetFile is GET /api/v1/files/{id}.
func (s *Server) handleGetFile(w http.ResponseWriter, r *http.Request) error {
	f, err := s.store.GetFile(r.Context(), actor(r), r.PathValue("id"), true)
	if err != nil {
		return fileNotFound(err)
	}
	return ok(w, fileRecord(f))
}

// handleGetFileDataContent is GET /api/v1/files/{id}/data/content.
func (s *Server) handleGetFileDataContent(w http.ResponseWriter, r *http.Request) error {
	f, err := s.store.GetFile(r.Context(), actor(r), r.PathValue("id"), true)
	if err != nil {
		return fileNotFound(err)
	}
	content := ""
	if f.Content != nil {
		content = *f.Content
	}
	return ok(w, map[string]string{"content": content})
}

// handleGetFileContent is GET /api/v1/files/{id}/content[?attachment=]:
// the stored bytes, streamed piece by piece (ranges supported). As Open
// WebUI: PDFs inline, plain text without a disposition, everything else
// as an attachment, so uploaded HTML or SVG never renders in Hearth's
// origin; nosniff keeps browsers from guessing otherwise.
func (s *Server) handleGetFileContent(w http.ResponseWriter, r *http.Request) error {
	attachment, err := queryBool(r, "attachment")
	if err != nil {
		return err
	}
	ctx := r.Context()
	a := actor(r)
	id := r.PathValue("id")
	f, err := s.store.GetFile(ctx, a, id, false)
	if err != nil {
		return fileNotFound(err)
	}
	src, err := s.store.OpenFileContent(ctx, a, id)
	if err != nil {
		return fileNotFound(err)
	}
	var meta struct {
		ContentType string `json:"content_type"`
	}
	json.Unmarshal(f.Meta, &meta)
	ct := meta.ContentType
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt == "" {
		ct = mime.TypeByExtension(path.Ext(f.Filename))
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	mt, _, _ := mime.ParseMediaType(ct)
	disposition := ""
	switch {
	case attachment:
		disposition = "attachment"
	case mt == "application/pdf" || strings.HasSuffix(strings.ToLower(f.Filename), ".pdf"):
		disposition, ct = "inline", "application/pdf"
	case mt != "text/plain":
		disposition = "attachment"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	if disposition != "" {
		h.Set("Content-Disposition", disposition+"; filename*=UTF-8''"+url.PathEscape(f.Filename))
	}
	http.ServeContent(w, r, "", time.Unix(f.UpdatedAt, 0), src)
	return nil
}

// handleDeleteFile is DELETE /api/v1/files/{id}: owner, admin, or write
// access through a collection.
func (s *Server) handleDeleteFile(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteFile(r.Context(), actor(r), r.PathValue("id")); err != nil {
		return fileNotFound(err)
	}
	s.ingest.Notify() // status streams of the file end with not_found
	return ok(w, map[string]string{"message": "File deleted successfully"})
}

// handleDeleteAllFiles is DELETE /api/v1/files/all (admin).
func (s *Server) handleDeleteAllFiles(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteAllFiles(r.Context(), actor(r)); err != nil {
		return err
	}
	s.ingest.Notify()
	return ok(w, map[string]string{"message": "All files deleted successfully"})
}

// statusPoll is how often a status stream repeats "pending" (Open WebUI
// polls every second; Hearth wakes on changes and keeps the beat), and
// statusPolls bounds the stream as Open WebUI's 7200 polls do.
const (
	statusPoll  = time.Second
	statusPolls = 7200
)

// handleFileStatus is GET /api/v1/files/{id}/process/status[?stream=]
// (COMPAT.md §8.3): {status, error?}, or a Server-Sent Events stream of
// such objects until completed, failed or not_found.
func (s *Server) handleFileStatus(w http.ResponseWriter, r *http.Request) error {
	stream, err := queryBool(r, "stream")
	if err != nil {
		return err
	}
	ctx := r.Context()
	a := actor(r)
	id := r.PathValue("id")
	changed := s.ingest.Changes()
	status, msg, err := s.store.FileStatus(ctx, a, id)
	if err != nil {
		return fileNotFound(err)
	}
	if !stream {
		return ok(w, statusBody(status, msg))
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	tick := time.NewTicker(statusPoll)
	defer tick.Stop()
	beat := true // the first read is answered at once
	for polls := 0; polls < statusPolls; {
		switch {
		case errors.Is(err, store.ErrNotFound):
			send(map[string]string{"status": "not_found"})
			return nil
		case err != nil:
			return nil // the answer has started: nothing better to say
		case status == "":
			return nil // never processed: Open WebUI ends without an event
		case status != store.FilePending:
			send(statusBody(status, msg))
			return nil
		case beat:
			if !send(statusBody(status, msg)) {
				return nil
			}
			polls++
		}
		beat = false
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
			beat = true
		}
		changed = s.ingest.Changes()
		status, msg, err = s.store.FileStatus(ctx, a, id)
	}
	return nil
}

// statusBody is SPEC.md §2 "File processing status": error only when failed.
func statusBody(status, msg string) map[string]string {
	if status == "" {
		status = store.FilePending // Open WebUI: data.status or pending
	}
	out := map[string]string{"status": status}
	if status == store.FileFailed && msg != "" {
		out["error"] = msg
	}
	return out
}
