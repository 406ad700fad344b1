package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"hearth/ingest"
	"hearth/store"
)

// multipartBody builds a multipart form with a `file` part (and optional
// extra fields); it returns the body and its Content-Type.
func multipartBody(t testing.TB, filename, contentType string, data []byte, fields map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if filename != "" {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + filename + `"`}
		if contentType != "" {
			h["Content-Type"] = []string{contentType}
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(data)
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

// upload posts a file as tok and returns the response.
func (f *fixture) upload(tok, query, filename, contentType string, data []byte) *httptest.ResponseRecorder {
	f.t.Helper()
	body, ct := multipartBody(f.t, filename, contentType, data, nil)
	req := httptest.NewRequest("POST", "/api/v1/files/"+query, body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", bearer(tok))
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	return w
}

type uploadedFile struct {
	Status   bool   `json:"status"`
	ID       string `json:"id"`
	UserID   string `json:"user_id"`
	Filename string `json:"filename"`
	Hash     *string
	Data     struct {
		Status  string `json:"status"`
		Content string `json:"content"`
		Error   string `json:"error"`
	} `json:"data"`
	Meta struct {
		Name        string `json:"name"`
		ContentType string `json:"content_type"`
		Size        int64  `json:"size"`
		FileHash    string `json:"file_hash"`
	} `json:"meta"`
}

func decodeFile(t testing.TB, w *httptest.ResponseRecorder) uploadedFile {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
	var out uploadedFile
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mkFile uploads and processes a file of owner's (foreground) and returns it.
func (f *fixture) mkFile(tok, filename, contentType, content string) uploadedFile {
	f.t.Helper()
	return decodeFile(f.t, f.upload(tok, "?process_in_background=false", filename, contentType, []byte(content)))
}

// storeFile puts a processed file with a fixed id into the store directly.
func (f *fixture) storeFile(owner store.User, id, content string) {
	f.t.Helper()
	ctx := context.Background()
	up, err := f.store.NewFileUpload(ctx, actorOf(owner), id, id+".txt", 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := up.Write(ctx, strings.NewReader(content)); err != nil {
		f.t.Fatal(err)
	}
	if _, err := up.Commit(ctx, json.RawMessage(`{"name":"`+id+`.txt","content_type":"text/plain"}`), store.FilePending); err != nil {
		f.t.Fatal(err)
	}
	if err := f.store.SetFileResult(ctx, actorOf(owner), id, content, ""); err != nil {
		f.t.Fatal(err)
	}
}

func TestFileUploadBackgroundAndStatus(t *testing.T) {
	f := newFixture(t, nil)
	up := decodeFile(t, f.upload(f.userTok, "", "notes.md", "text/markdown", []byte("# Title\n\nHello **world**.\n")))
	if !up.Status || up.ID == "" || up.UserID != f.user.ID || up.Filename != "notes.md" {
		t.Fatalf("upload answer %+v", up)
	}
	if up.Data.Status != "pending" || up.Meta.Size != 26 || up.Meta.ContentType != "text/markdown" || len(up.Meta.FileHash) != 64 {
		t.Fatalf("upload answer %+v", up)
	}
	// The SSE stream ends at completed.
	w := f.do("GET", "/api/v1/files/"+up.ID+"/process/status?stream=true", f.userTok, "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %v", w.Code, w.Header())
	}
	events := sseData(t, w.Body.String())
	if len(events) == 0 || events[len(events)-1] != `{"status":"completed"}` {
		t.Fatalf("events %q", events)
	}
	w = f.do("GET", "/api/v1/files/"+up.ID+"/process/status", f.userTok, "")
	expect(t, w, 200, "")
	if strings.TrimSpace(w.Body.String()) != `{"status":"completed"}` {
		t.Fatalf("status %s", w.Body.String())
	}
	got := decodeFile(t, f.do("GET", "/api/v1/files/"+up.ID, f.userTok, ""))
	if got.Data.Content != "# Title\n\nHello **world**.\n" || got.Hash == nil || len(*got.Hash) != 64 {
		t.Fatalf("file %+v", got)
	}
	w = f.do("GET", "/api/v1/files/"+up.ID+"/data/content", f.userTok, "")
	expect(t, w, 200, "")
	if !strings.Contains(w.Body.String(), `"content":"# Title`) {
		t.Fatal(w.Body.String())
	}
}

// sseData returns the payloads of the data: lines.
func sseData(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestFileStatusStreamLive reads the stream over a real connection while a
// file is still pending, so the stream must wait for the change.
func TestFileStatusStreamLive(t *testing.T) {
	f := newFixture(t, nil)
	// A pending file nobody processes yet: stored directly.
	ctx := context.Background()
	up, err := f.store.NewFileUpload(ctx, actorOf(f.user), "slow-file", "slow.txt", 0)
	if err != nil {
		t.Fatal(err)
	}
	up.Write(ctx, strings.NewReader("slow text"))
	if _, err := up.Commit(ctx, json.RawMessage(`{"content_type":"text/plain"}`), store.FilePending); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.srv)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/files/slow-file/process/status?stream=true", nil)
	req.Header.Set("Authorization", bearer(f.userTok))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	if err != nil || line != "data: {\"status\":\"pending\"}\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	// The stream is open and has said pending: processing now must end it.
	f.srv.ingest.Submit(jobOf(f.user, "slow-file"))
	rest, _ := io.ReadAll(rd)
	ev := sseData(t, string(rest))
	if len(ev) == 0 || ev[len(ev)-1] != `{"status":"completed"}` {
		t.Fatalf("events %q", ev)
	}
}

func TestFileUploadForegroundAndDownload(t *testing.T) {
	f := newFixture(t, nil)
	// Multi-MiB across pieces, bytes not valid as text on purpose at the end.
	data := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16+3)
	up := decodeFile(t, f.upload(f.userTok, "?process_in_background=false", "big.txt", "text/plain", data))
	if up.Data.Status != "completed" || len(up.Data.Content) != len(data) || up.Meta.Size != int64(len(data)) {
		t.Fatalf("status %q, content %d bytes, size %d", up.Data.Status, len(up.Data.Content), up.Meta.Size)
	}
	w := f.do("GET", "/api/v1/files/"+up.ID+"/content", f.userTok, "")
	expect(t, w, 200, "")
	if !bytes.Equal(w.Body.Bytes(), data) {
		t.Fatalf("download differs: %d bytes, want %d", w.Body.Len(), len(data))
	}
	if w.Header().Get("Content-Type") != "text/plain" || w.Header().Get("X-Content-Type-Options") != "nosniff" ||
		w.Header().Get("Content-Disposition") != "" {
		t.Fatalf("headers %v", w.Header())
	}
	w = f.do("GET", "/api/v1/files/"+up.ID+"/content?attachment=true", f.userTok, "")
	if got := w.Header().Get("Content-Disposition"); got != "attachment; filename*=UTF-8''big.txt" {
		t.Fatalf("disposition %q", got)
	}
	// HTML is never served inline.
	h := f.mkFile(f.userTok, "page one.html", "text/html", "<html><script>alert(1)</script><p>Hi</p></html>")
	w = f.do("GET", "/api/v1/files/"+h.ID+"/content", f.userTok, "")
	if got := w.Header().Get("Content-Disposition"); got != "attachment; filename*=UTF-8''page%20one.html" {
		t.Fatalf("disposition %q", got)
	}
	if h.Data.Content != "Hi" {
		t.Fatalf("html content %q", h.Data.Content)
	}
	// process=false stores without processing.
	raw := decodeFile(t, f.upload(f.userTok, "?process=false", "raw.txt", "text/plain", []byte("raw")))
	if raw.Status || raw.Data.Status != "" {
		t.Fatalf("unprocessed %+v", raw)
	}
}

func TestFileUploadRefusals(t *testing.T) {
	f := newFixture(t, map[string]string{"RAG_FILE_MAX_SIZE": "1"})
	expect(t, f.upload(f.userTok, "", "empty.txt", "text/plain", nil), 400, msgEmptyFile)
	expect(t, f.upload(f.userTok, "", "big.txt", "text/plain", bytes.Repeat([]byte("x"), 1<<20+1)), 413, msgFileTooLarge("1 MB"))
	// Exactly the limit is accepted.
	decodeFile(t, f.upload(f.userTok, "?process=false", "ok.txt", "text/plain", bytes.Repeat([]byte("x"), 1<<20)))
	// Not multipart, or no file field.
	expect(t, f.do("POST", "/api/v1/files/", f.userTok, `{"file":"x"}`), 422, msgNoFilePart)
	body, ct := multipartBody(t, "", "", nil, map[string]string{"other": "x"})
	w := f.doH("POST", "/api/v1/files/", body.String(), map[string]string{"Authorization": bearer(f.userTok), "Content-Type": ct})
	expect(t, w, 422, msgNoFilePart)
	body, ct = multipartBody(t, "a.txt", "text/plain", []byte("a"), map[string]string{"metadata": "[1"})
	w = f.doH("POST", "/api/v1/files/", body.String(), map[string]string{"Authorization": bearer(f.userTok), "Content-Type": ct})
	expect(t, w, 400, msgInvalidMetadata)
	// A body cut short.
	body, ct = multipartBody(t, "cut.txt", "text/plain", bytes.Repeat([]byte("y"), 3000), nil)
	w = f.doH("POST", "/api/v1/files/", body.String()[:2000], map[string]string{"Authorization": bearer(f.userTok), "Content-Type": ct})
	expect(t, w, 400, msgUploadFailed)
	// Nothing of the refused uploads is left: one stored file, no stray pieces.
	files, total, err := f.store.ListFiles(context.Background(), actorOf(f.admin), store.FileFilter{All: true})
	if err != nil || total != 1 || len(files) != 1 {
		t.Fatalf("files %d %v", total, err)
	}
	if n, _ := f.store.DeleteIncompleteFiles(context.Background(), time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("%d incomplete uploads left behind", n)
	}
}

func TestFileAccessAndDelete(t *testing.T) {
	f := newFixture(t, nil)
	up := f.mkFile(f.userTok, "mine.txt", "text/plain", "secret")
	for _, p := range []string{"", "/content", "/data/content", "/process/status"} {
		expect(t, f.do("GET", "/api/v1/files/"+up.ID+p, f.otherTok, ""), 404, msgNotFound)
		expect(t, f.do("GET", "/api/v1/files/"+up.ID+p, f.adminTok, ""), 200, "")
	}
	expect(t, f.do("DELETE", "/api/v1/files/"+up.ID, f.otherTok, ""), 404, msgNotFound)
	// Lists: own files; an admin sees everyone's.
	f.mkFile(f.otherTok, "theirs.txt", "text/plain", "x")
	var list struct {
		Items []uploadedFile `json:"items"`
		Total int            `json:"total"`
	}
	json.Unmarshal(f.do("GET", "/api/v1/files/", f.userTok, "").Body.Bytes(), &list)
	if list.Total != 1 || list.Items[0].ID != up.ID || list.Items[0].Data.Content != "secret" {
		t.Fatalf("user list %+v", list)
	}
	list.Items = nil
	json.Unmarshal(f.do("GET", "/api/v1/files/?content=false", f.adminTok, "").Body.Bytes(), &list)
	if list.Total != 2 || list.Items[0].Data.Content != "" {
		t.Fatalf("admin list %+v", list)
	}
	expect(t, f.do("DELETE", "/api/v1/files/"+up.ID, f.userTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/files/"+up.ID, f.userTok, ""), 404, msgNotFound)
	expect(t, f.do("DELETE", "/api/v1/files/all", f.adminTok, ""), 200, "")
	json.Unmarshal(f.do("GET", "/api/v1/files/", f.adminTok, "").Body.Bytes(), &list)
	if list.Total != 0 {
		t.Fatalf("after delete all: %+v", list)
	}
}

func TestFileProcessingFailure(t *testing.T) {
	f := newFixture(t, nil)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	up := f.mkFile(f.userTok, "pic.png", "image/png", string(png))
	if up.Data.Status != "failed" || up.Data.Error != "File type image/png is not supported for processing" {
		t.Fatalf("%+v", up.Data)
	}
	w := f.do("GET", "/api/v1/files/"+up.ID+"/process/status?stream=true", f.userTok, "")
	ev := sseData(t, w.Body.String())
	if len(ev) != 1 || ev[0] != `{"error":"File type image/png is not supported for processing","status":"failed"}` {
		t.Fatalf("events %q", ev)
	}
	// The bytes are still served (as an attachment).
	w = f.do("GET", "/api/v1/files/"+up.ID+"/content", f.userTok, "")
	if !bytes.Equal(w.Body.Bytes(), png) || w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("download %d bytes %v", w.Body.Len(), w.Header())
	}
}

func authzFilesRows() []authzRow {
	body, ct := multipartBody(nilTB{}, "a.txt", "text/plain", []byte("hello"), nil)
	withFile := func(f *fixture) { f.storeFile(f.user, "users-file", "hello") }
	owned := [5]int{401, 401, 200, 404, 200}
	p := func(suffix string) func(*fixture) string { return fixedPath("/api/v1/files/users-file" + suffix) }
	return []authzRow{
		{pattern: "POST /api/v1/files/", body: body.String(), ctype: ct, want: wantVerified},
		{pattern: "GET /api/v1/files/", setup: withFile, want: wantVerified},
		{pattern: "DELETE /api/v1/files/all", setup: withFile, want: wantAdmin},
		{pattern: "GET /api/v1/files/{id}", setup: withFile, path: p(""), want: owned},
		{pattern: "GET /api/v1/files/{id}/content", setup: withFile, path: p("/content"), want: owned},
		{pattern: "GET /api/v1/files/{id}/data/content", setup: withFile, path: p("/data/content"), want: owned},
		{pattern: "GET /api/v1/files/{id}/process/status", setup: withFile, path: p("/process/status"), want: owned},
		{pattern: "DELETE /api/v1/files/{id}", setup: withFile, path: p(""), want: owned},
	}
}

// nilTB lets table builders without a *testing.T build request bodies.
type nilTB struct{ testing.TB }

func (nilTB) Helper()           {}
func (nilTB) Fatal(args ...any) { panic(args) }

func jobOf(u store.User, fileID string) ingest.Job {
	return ingest.Job{FileID: fileID, Owner: actorOf(u)}
}
