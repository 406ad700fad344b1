// Command completions measures N concurrent streaming completions whose
// replies are all stored (issue 4 figures): an in-process Hearth server on a
// temporary database, a fast fake OpenAI-compatible upstream and the load
// generator. The upstream and the load generator run in a child process
// (this binary re-executed with -role load), so the peak RSS reported is
// Hearth's own (plus the Go runtime of this process).
//
//	go run ./bench/completions [-n 1000] [-chunks 50] [-mode sync|async]
//
// mode sync: POST /api/chat/completions with chat_id + id + stream:true and
// no session_id (COMPAT §4.4 mode 2: the answer, JSON null, comes once the
// reply is stored). mode async: with session_id (mode 1): the answer comes at
// once and the client polls GET /api/tasks/chat/{id} until the task is gone.
// Latency is per request from send to the end of the answer (sync) or to
// the poll that sees no task (async). Not part of CI.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"hearth/auth"
	"hearth/config"
	"hearth/server"
	"hearth/store"
)

func main() {
	role := flag.String("role", "server", "server (measured) or load (child: fake upstream + load generator)")
	n := flag.Int("n", 1000, "concurrent completions")
	chunks := flag.Int("chunks", 50, "streamed chunks per reply")
	mode := flag.String("mode", "sync", "sync (mode 2) or async (mode 1)")
	procs := flag.Int("procs", 2, "GOMAXPROCS of the server process")
	flag.Parse()
	var err error
	if *role == "load" {
		err = runLoad(*chunks, *mode)
	} else {
		runtime.GOMAXPROCS(*procs)
		err = runServer(*n, *chunks, *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "completions:", err)
		os.Exit(1)
	}
}

// job is what the parent hands the child: where Hearth is and what to ask.
type job struct {
	URL     string   `json:"url"`
	Token   string   `json:"token"`
	ChatIDs []string `json:"chat_ids"`
}

// result is what the child reports.
type result struct {
	Total     time.Duration   `json:"total"`
	Latencies []time.Duration `json:"latencies"`
	Errors    []string        `json:"errors"`
}

func runServer(n, chunks int, mode string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "-role", "load", "-chunks", fmt.Sprint(chunks), "-mode", mode)
	child.Stderr = os.Stderr
	in, _ := child.StdinPipe()
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		return err
	}
	defer child.Process.Kill()
	rd := bufio.NewReader(out)
	upURL, err := rd.ReadString('\n')
	if err != nil {
		return fmt.Errorf("child: %w", err)
	}
	upURL = strings.TrimSpace(upURL)

	dir, err := os.MkdirTemp("", "hearth-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "hearth.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	env := map[string]string{
		"OPENAI_API_BASE_URLS": upURL + "/v1", "OPENAI_API_KEYS": "sk-fake", "ENABLE_OLLAMA_API": "false",
		"ENABLE_TITLE_GENERATION": "false", "ENABLE_TAGS_GENERATION": "false", "ENABLE_FOLLOW_UP_GENERATION": "false",
	}
	settings, _, err := config.Load(ctx, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, st)
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens([]byte("bench-secret-bench-secret-bench-secret"))
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * n, MaxIdleConnsPerHost: 2 * n, IdleConnTimeout: time.Minute}}
	srv, err := server.New(ctx, server.Deps{Store: st, Settings: settings, Tokens: tokens, Passwords: auth.NewPasswords(4),
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), Version: "bench", HTTPClient: hc})
	if err != nil {
		return err
	}
	u, err := st.CreateUser(ctx, store.NewUser{Email: "bench@example.com", Name: "Bench", Role: "admin"})
	if err != nil {
		return err
	}
	tok, _, err := tokens.Issue(u.ID, time.Hour)
	if err != nil {
		return err
	}
	a := store.Actor{UserID: u.ID, Role: u.Role}
	ids := make([]string, n)
	for i := range ids {
		p, _ := store.ParseChat([]byte(`{"title":"New Chat","models":["fast"],"history":{"currentId":"a1","messages":{` +
			`"u1":{"id":"u1","parentId":null,"childrenIds":["a1"],"role":"user","content":"hi","timestamp":1,"models":["fast"]},` +
			`"a1":{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":"","model":"fast","timestamp":2,"done":false}}}}`))
		if ids[i], err = st.CreateChat(ctx, a, store.NewChat{Chat: p}); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	// Warm the model list (one upstream /models call) outside the measure.
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/models", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		return err
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	runtime.GC()
	before := procStatus()

	b, _ := json.Marshal(job{URL: "http://" + ln.Addr().String(), Token: tok, ChatIDs: ids})
	in.Write(append(b, '\n'))
	line, err := rd.ReadString('\n')
	if err != nil {
		return fmt.Errorf("child result: %w", err)
	}
	var res result
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		return err
	}
	after := procStatus()

	// Every reply must be stored, complete.
	want := strings.Repeat("tok ", chunks)
	bad := 0
	for _, id := range ids {
		rec, err := st.GetChat(ctx, a, id, false)
		if err != nil {
			return err
		}
		var doc struct {
			History struct {
				Messages map[string]struct {
					Content string `json:"content"`
					Done    bool   `json:"done"`
				} `json:"messages"`
			} `json:"history"`
		}
		json.Unmarshal(rec.Chat, &doc)
		if m := doc.History.Messages["a1"]; !m.Done || m.Content != strings.TrimSpace(want) {
			bad++
		}
	}
	lat := res.Latencies
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	fmt.Printf("machine: %d cores, GOMAXPROCS %d, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Printf("mode %s: %d concurrent streaming completions, %d chunks each, every reply stored\n", mode, n, chunks)
	fmt.Printf("total %v (%.0f completions/s, %.0f chunks/s)\n", res.Total.Round(time.Millisecond),
		float64(n)/res.Total.Seconds(), float64(n*chunks)/res.Total.Seconds())
	fmt.Printf("latency p50 %v  p99 %v  max %v\n", pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), pct(1).Round(time.Millisecond))
	fmt.Printf("errors %d, replies not stored complete %d\n", len(res.Errors), bad)
	for i, e := range res.Errors {
		if i == 5 {
			break
		}
		fmt.Println("  error:", e)
	}
	fmt.Printf("server RSS: before %s, after %s, peak (VmHWM) %s\n", before["VmRSS"], after["VmRSS"], after["VmHWM"])
	if len(res.Errors) > 0 || bad > 0 {
		return errors.New("failures")
	}
	return nil
}

// procStatus reads /proc/self/status.
func procStatus() map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// runLoad is the child: it serves the fake upstream, prints its URL, reads
// the job, runs the load and prints the result.
func runLoad(chunks int, mode string) error {
	var stream strings.Builder
	for range chunks {
		stream.WriteString(`data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"fast","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}` + "\n\n")
	}
	stream.WriteString(`data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"fast","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":50,"total_tokens":53}}` + "\n\ndata: [DONE]\n\n")
	body := []byte(stream.String())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"fast","object":"model","created":1,"owned_by":"bench"}]}`))
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go (&http.Server{Handler: mux}).Serve(ln)
	fmt.Println("http://" + ln.Addr().String())

	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return err
	}
	var j job
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		return err
	}
	n := len(j.ChatIDs)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * n, MaxIdleConnsPerHost: 2 * n}, Timeout: 5 * time.Minute}
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	start := make(chan struct{})
	do := func(method, path, body string) (string, error) {
		req, _ := http.NewRequest(method, j.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+j.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b), err
	}
	for _, id := range j.ChatIDs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			body := `{"model":"fast","stream":true,"chat_id":"` + id + `","id":"a1","messages":[{"role":"user","content":"hi"}]`
			if mode == "async" {
				body += `,"session_id":"s-` + id + `"`
			}
			out, err := do("POST", "/api/chat/completions", body+"}")
			if err == nil && mode == "sync" && out != "null" {
				err = fmt.Errorf("answer %q", out)
			}
			for err == nil && mode == "async" {
				out, err = do("GET", "/api/tasks/chat/"+id, "")
				if err == nil && out == `{"task_ids":[]}` {
					break
				}
				// The poll interval of a client waiting for its answer
				// (the load being measured), not a synchronisation.
				time.Sleep(5 * time.Millisecond)
			}
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
				return
			}
			res.Latencies = append(res.Latencies, d)
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	res.Total = time.Since(t0)
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return nil
}
