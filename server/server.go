package server

import (
	"context"
	"hearth/vector"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"hearth/auth"
	"hearth/config"
	"hearth/ingest"
	"hearth/netguard"
	"hearth/store"
)

// Deps is everything the server needs; main builds it.
type Deps struct {
	Store     *store.Store
	Settings  *config.Settings
	Tokens    *auth.Tokens
	Passwords *auth.Passwords
	Log       *slog.Logger
	Version   string
	// UI is the built web client (index.html at its root); nil serves none.
	UI fs.FS
	// HTTPClient calls model upstreams (Ollama, OpenAI-compatible); nil
	// uses a client without an overall timeout (streams may run for
	// minutes; per-call deadlines come from contexts).
	HTTPClient *http.Client
	// OAuthHTTPClient calls identity providers (discovery, keys, token and
	// userinfo endpoints); nil uses a client with a 15 s timeout.
	OAuthHTTPClient *http.Client
}

// Server holds the live state of the HTTP surface. There is no global state:
// everything hangs off this value.
type Server struct {
	store     *store.Store
	settings  *config.Settings
	tokens    *auth.Tokens
	passwords *auth.Passwords
	log       *slog.Logger
	version   string
	ui        uiState

	routes  []route
	handler http.Handler

	// Sign-in limits (COMPAT.md §2.4: 15 attempts per 180 s per account);
	// per client address only failures count, so one office behind NAT is
	// not locked out by its own successful sign-ins.
	signinByAccount *auth.Limiter
	signinByIP      *auth.Limiter

	revokedMu sync.RWMutex
	revoked   map[string]int64 // signed-out JWT ids → expiry

	permsCache atomic.Pointer[defaultPermsJSON]

	modelsState   // models.go: connections, model list cache, resolver
	realtimeState // ws.go: live connections and event fan-out
	pipelineState // completions.go: completion pipeline and task registry
	oauthState    // oauth.go: OIDC sign-in

	ingest *ingest.Queue // files.go: file processing
	// vindex chunks, embeds and searches files (files.go; the queue's
	// Indexer and the pipeline's Searcher).
	vindex *ingest.VectorIndex
	// webGuardOpts are extra netguard options for user-supplied URLs;
	// only tests set them (netguard.ExemptForTest), never configuration.
	webGuardOpts []netguard.Option

	touchMu sync.Mutex
	touched map[string]int64 // user or key id → last recorded activity (s)
}

// New builds the server and its route table.
func New(ctx context.Context, d Deps) (*Server, error) {
	s := &Server{
		store: d.Store, settings: d.Settings, tokens: d.Tokens, passwords: d.Passwords,
		log: d.Log, version: d.Version, ui: uiState{files: d.UI},
		signinByAccount: auth.NewLimiter(15, 180*time.Second),
		signinByIP:      auth.NewLimiter(60, 180*time.Second),
		touched:         map[string]int64{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	rev, err := d.Store.RevokedTokens(ctx)
	if err != nil {
		return nil, err
	}
	s.revoked = rev
	if err := s.initModels(ctx, d); err != nil {
		return nil, err
	}
	if err := s.initOAuth(d); err != nil {
		return nil, err
	}
	if err := s.initRealtime(ctx, d); err != nil {
		return nil, err
	}
	s.vindex = &ingest.VectorIndex{Store: d.Store, Index: vector.New(), Config: s.embedConfig, HTTPClient: d.HTTPClient}
	if err := s.initPipeline(ctx, d); err != nil {
		return nil, err
	}
	if err := s.initFiles(ctx, d); err != nil {
		return nil, err
	}
	s.routes = s.routeTable()
	s.handler = s.buildMux()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// cfg is the current configuration snapshot.
func (s *Server) cfg() *config.Config { return s.settings.Get() }

// touch records activity of a user or key at most once a minute, so a busy
// client does not turn every request into a database write.
func (s *Server) touch(id string, write func(ctx context.Context, id string, at int64) error) {
	now := time.Now().Unix()
	s.touchMu.Lock()
	last := s.touched[id]
	if now-last < 60 {
		s.touchMu.Unlock()
		return
	}
	s.touched[id] = now
	if len(s.touched) > 100_000 { // bound memory; losing throttle state only costs a write
		clear(s.touched)
	}
	s.touchMu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := write(ctx, id, now); err != nil {
			s.log.Warn("recording activity failed", slog.Any("err", err))
		}
	}()
}
