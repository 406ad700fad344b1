package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"hearth/auth"
	"hearth/config"
	"hearth/server"
	"hearth/store"
	"hearth/ui"
)

func (a *app) serveCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "serve",
		Usage: "run the HTTP server",
		Description: "Creates DATA_DIR (0700) and hearth.db on first start, applies migrations, and serves\n" +
			"until SIGINT or SIGTERM, then drains open requests for up to --shutdown-timeout.",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "port", Usage: "listening port; wins over $PORT (default 8080); 0 picks a free port"},
			&ucli.StringFlag{Name: "host", Usage: "listening address; wins over $HOST (default 0.0.0.0)"},
			dataDirFlag(),
			&ucli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json (to stderr)"},
			&ucli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&ucli.DurationFlag{Name: "shutdown-timeout", Value: 15 * time.Second, Usage: "how long to wait for open requests at shutdown"},
		},
		Action: a.serve,
	}
}

// newLogger builds the process logger: slog to stderr, text or JSON.
func (a *app) newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, ucli.Exit(fmt.Sprintf("--log-level: %v", err), 2)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text", "":
		return slog.New(slog.NewTextHandler(a.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(a.stderr, opts)), nil
	}
	return nil, ucli.Exit(fmt.Sprintf("--log-format: %q is neither text nor json", format), 2)
}

func (a *app) serve(c *ucli.Context) error {
	ctx := c.Context
	log, err := a.newLogger(c.String("log-format"), c.String("log-level"))
	if err != nil {
		return err
	}
	dir, fromFlag := a.dataDir(c)
	inst, err := a.start(ctx, dir, fromFlag, log)
	if err != nil {
		return err
	}
	defer inst.store.Close()

	cfg := inst.settings.Get()
	host, port := cfg.Host, cfg.Port
	if c.IsSet("host") {
		host = c.String("host")
	}
	if c.IsSet("port") { // SPEC §1: the serve --port flag wins over PORT
		port = c.Int("port")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           inst.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout/WriteTimeout: uploads and streamed completions may
		// legitimately take minutes; bodies are bounded by the server's limits.
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 1 << 20,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "version", a.version, "data_dir", dir)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	timeout := c.Duration("shutdown-timeout")
	log.Info("shutting down", "timeout", timeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown timed out; closing open connections", "err", err)
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Generations stop with the signal and store what they have; wait for
	// those final writes before the store closes.
	if err := inst.handler.WaitTasks(sctx); err != nil {
		log.Warn("shutdown: running generations did not finish storing", "err", err)
	}
	log.Info("stopped")
	return nil
}

// instance is a started Hearth: an open store, the loaded settings and the
// HTTP handler built on them.
type instance struct {
	store    *store.Store
	settings *config.Settings
	handler  *server.Server
}

// start does everything serve does before it listens: create DATA_DIR, get
// the secret, open (and migrate) the database, load config, refuse an
// unusable setup, create the bootstrap admin, build the server. It makes no
// network connection. On error nothing is left open.
func (a *app) start(ctx context.Context, dir string, dirFromFlag bool, log *slog.Logger) (*instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	over := map[string]string{}
	if dirFromFlag {
		over["DATA_DIR"] = dir
	}
	configured := ""
	for _, name := range []string{"WEBUI_SECRET_KEY", "WEBUI_JWT_SECRET_KEY"} {
		if v, ok := a.getenv(name); ok && v != "" {
			configured = v
			break
		}
	}
	secret, err := auth.LoadOrCreateSecret(configured, dir)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	if configured == "" {
		// Feed the generated secret to config so the keys that default to
		// WEBUI_SECRET_KEY (OAuth token encryption) follow it.
		over["WEBUI_SECRET_KEY"] = string(secret)
	}

	path := filepath.Join(dir, dbFile)
	st, err := store.Open(ctx, path)
	if err != nil {
		if errors.Is(err, store.ErrSchemaTooNew) {
			return nil, ucli.Exit(fmt.Sprintf("refusing to start: %s: %v", path, err), 1)
		}
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	inst, err := a.build(ctx, st, secret, over, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	return inst, nil
}

func (a *app) build(ctx context.Context, st *store.Store, secret []byte, over map[string]string, log *slog.Logger) (*instance, error) {
	sealed, err := newSealedConfig(st, secret)
	if err != nil {
		return nil, err
	}
	settings, warns, err := config.Load(ctx, a.configEnv(over), sealed)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		log.Warn("configuration", "warning", string(w))
	}
	if err := settings.Get().Validate(); err != nil {
		return nil, ucli.Exit("refusing to start: "+err.Error(), 1)
	}
	passwords := auth.NewPasswords(a.bcryptCost)
	created, err := bootstrapAdmin(ctx, st, settings, passwords)
	if err != nil {
		return nil, fmt.Errorf("bootstrap admin: %w", err)
	}
	if created != "" {
		log.Info("created the admin account from WEBUI_ADMIN_EMAIL; sign-up is now disabled", "email", created)
	} else if cfg := settings.Get(); (cfg.AdminBootstrapEmail == "") != (cfg.AdminBootstrapPassword == "") {
		log.Warn("WEBUI_ADMIN_EMAIL and WEBUI_ADMIN_PASSWORD must be set together; no admin account created")
	}
	tokens, err := auth.NewTokens(secret)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	srv, err := server.New(ctx, server.Deps{
		Store: st, Settings: settings, Tokens: tokens, Passwords: passwords,
		Log: log, Version: a.version, UI: ui.FS(),
	})
	if err != nil {
		return nil, err
	}
	return &instance{store: st, settings: settings, handler: srv}, nil
}
