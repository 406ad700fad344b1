package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"hearth/ingest"
	"hearth/netguard"
	"hearth/store"
)

// msgWebFailed is every failure of POST /retrieval/process/web, a blocked
// URL included: Open WebUI answers its generic fallback and hides the
// reason (COMPAT.md §8.7); the reason is logged.
const msgWebFailed = "[ERROR: Error querying knowledge base]"

// webMaxBytes caps a fetched page when RAG_FILE_MAX_SIZE sets no smaller
// limit: the body is held in memory to be extracted.
const webMaxBytes = 32 << 20

// webGuard builds the guard for user-supplied URLs from the current
// configuration. s.webGuardOpts is set only by tests (netguard.ExemptForTest
// needs a testing.TB), never from configuration.
func (s *Server) webGuard() *netguard.Guard {
	c := s.cfg()
	return netguard.New(netguard.Policy{
		AllowLocal:      c.EnableLocalWebFetch,
		FilterList:      c.WebFetchFilterList,
		FollowRedirects: c.AIOHTTPClientAllowRedirects,
		Timeout:         60 * time.Second,
	}, s.webGuardOpts...)
}

// webCollectionName is Open WebUI's default collection of a URL:
// sha256(url) in hex, cut to 63 characters.
func webCollectionName(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:])[:63]
}

type processWebForm struct {
	URL            string `json:"url"`
	CollectionName string `json:"collection_name"`
}

// handleProcessWeb is POST /api/v1/retrieval/process/web (COMPAT.md §8.7):
// the page is fetched through netguard and its text extracted; with
// process=false only the text is returned. With process=true the page is
// stored as a file record owned by the caller (filename and meta.source =
// the URL, meta.collection_name = the collection) whose text — and, with
// an embedding engine, chunks and vectors — the retrieval pipeline already
// knows how to use. That is the simplest mapping: a web collection is the
// set of the caller's web files with that collection name, and when
// collection_name names a knowledge collection the caller may write, the
// file is added to it too.
func (s *Server) handleProcessWeb(w http.ResponseWriter, r *http.Request) error {
	process, err := queryBoolDefault(r, "process", true)
	if err != nil {
		return err
	}
	overwrite, err := queryBoolDefault(r, "overwrite", true)
	if err != nil {
		return err
	}
	var form processWebForm
	if err := decode(r, &form); err != nil {
		return err
	}
	if err := required("url", form.URL); err != nil {
		return err
	}
	out, err := s.processWeb(r.Context(), actor(r), form, process, overwrite)
	if err != nil {
		if r.Context().Err() != nil {
			return err
		}
		s.log.WarnContext(r.Context(), "process/web failed", "request_id", requestID(r), "err", err)
		return errorf(http.StatusBadRequest, msgWebFailed)
	}
	return ok(w, out)
}

func (s *Server) processWeb(ctx context.Context, a store.Actor, form processWebForm, process, overwrite bool) (any, error) {
	g := s.webGuard()
	if _, err := g.CheckURL(form.URL); err != nil {
		return nil, err
	}
	name := form.CollectionName
	var kb *store.Knowledge
	if process && name != "" {
		// A knowledge collection by that id must be writable by the
		// caller; any other name is the caller's own web collection.
		k, err := s.store.GetKnowledge(ctx, a, name)
		switch {
		case err == nil && !k.WriteAccess:
			return nil, errors.New("no write access to the knowledge collection")
		case err == nil:
			kb = &k
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	limit := int64(webMaxBytes)
	if mb, set := s.cfg().RAGFileMaxSize.Limit(); set && mb > 0 && int64(mb)<<20 < limit {
		limit = int64(mb) << 20
	}
	hc := g.Client()
	defer hc.CloseIdleConnections()
	page, err := ingest.FetchPage(ctx, hc, form.URL, func(r io.Reader) ([]byte, error) { return netguard.ReadLimited(r, limit) })
	if err != nil {
		return nil, err
	}
	if !process {
		return map[string]any{"status": true, "content": page.Text}, nil
	}
	if strings.TrimSpace(page.Text) == "" {
		return nil, ingest.ErrEmptyContent // Open WebUI's EMPTY_CONTENT: nothing to store
	}
	if name == "" {
		name = webCollectionName(form.URL)
	}
	var old []string
	if overwrite {
		if old, err = s.store.WebCollectionFiles(ctx, a, name); err != nil {
			return nil, err
		}
	}
	if err := s.storeWebPage(ctx, a, form.URL, name, page, kb); err != nil {
		return nil, err
	}
	// The previous pages of the collection go only once the new one is
	// stored, so a failed fetch or embedding keeps them.
	for _, id := range old {
		if err := s.store.DeleteFile(ctx, a, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return map[string]any{
		"status": true, "collection_name": name, "filename": form.URL,
		"file": map[string]any{
			"data": map[string]any{"content": page.Text},
			"meta": map[string]any{"name": form.URL, "source": form.URL},
		},
	}, nil
}

// storeWebPage writes the page as a completed file of the caller, indexes
// it when an embedding engine is configured and links it to kb (if any).
// On failure nothing of it is left.
func (s *Server) storeWebPage(ctx context.Context, a store.Actor, url, name string, page ingest.Page, kb *store.Knowledge) (err error) {
	up, err := s.store.NewFileUpload(ctx, a, uuid.NewString(), url, 0)
	if err != nil {
		return err
	}
	defer func() {
		if aerr := up.Abort(ctx); aerr != nil {
			s.log.Warn("removing a failed web page", "err", aerr)
		}
	}()
	if _, err := up.Write(ctx, bytes.NewReader(page.Body)); err != nil {
		return err
	}
	meta := map[string]any{"name": url, "source": url, "content_type": nil, "size": up.Size(),
		"file_hash": up.SHA256(), "collection_name": name, "data": map[string]any{}}
	if page.ContentType != "" {
		meta["content_type"] = page.ContentType
	}
	f, err := up.Commit(ctx, encodeJSON(meta), store.FilePending)
	if err != nil {
		return err
	}
	committed := f.ID
	defer func() {
		if err != nil {
			if derr := s.store.DeleteFile(context.WithoutCancel(ctx), a, committed); derr != nil {
				s.log.Warn("removing a failed web page", "err", derr)
			}
		}
	}()
	if err = s.vindex.IndexFile(ctx, f, page.Text); err != nil {
		return err
	}
	if err = s.store.SetFileResult(ctx, a, f.ID, page.Text, ""); err != nil {
		return err
	}
	if kb != nil {
		if _, err = s.store.AddKnowledgeFile(ctx, a, kb.ID, f.ID); err != nil {
			return err
		}
	}
	return nil
}
