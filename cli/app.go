package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	ucli "github.com/urfave/cli/v2"

	"hearth/config"
)

// dbFile is the database's name inside DATA_DIR (ARCHITECTURE.md).
const dbFile = "hearth.db"

// Options is everything the commands take from the process. Zero values mean
// the real process: os.LookupEnv, os.Stdin, os.Stdout, os.Stderr, bcrypt's
// default cost.
type Options struct {
	Version string
	Getenv  config.Getenv
	Stdin   io.Reader // `user … --password -` reads the password from here
	Stdout  io.Writer
	Stderr  io.Writer
	// BcryptCost is the cost of new password hashes (0 = bcrypt default);
	// tests lower it.
	BcryptCost int
}

// app carries the Options to the command actions.
type app struct {
	version    string
	getenv     config.Getenv
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	bcryptCost int
}

// New builds the command-line application. It never exits the process:
// RunContext returns the error and main decides the exit code (ExitCode).
func New(o Options) *ucli.App {
	a := &app{version: o.Version, getenv: o.Getenv, stdin: o.Stdin, stdout: o.Stdout, stderr: o.Stderr, bcryptCost: o.BcryptCost}
	if a.version == "" {
		a.version = "dev"
	}
	if a.getenv == nil {
		a.getenv = os.LookupEnv
	}
	if a.stdin == nil {
		a.stdin = os.Stdin
	}
	if a.stdout == nil {
		a.stdout = os.Stdout
	}
	if a.stderr == nil {
		a.stderr = os.Stderr
	}
	return &ucli.App{
		Name:    "hearth",
		Usage:   "a single-binary, Open WebUI-compatible chat backend",
		Version: a.version,
		Description: "Everything lives in DATA_DIR (default ./data): hearth.db (SQLite) and secret_key.\n" +
			"Configuration comes from the environment (see `hearth config explain`).",
		Writer:    a.stdout,
		ErrWriter: a.stderr,
		// Errors go back to main, which prints them and exits once.
		ExitErrHandler: func(*ucli.Context, error) {},
		Commands: []*ucli.Command{
			a.serveCommand(),
			a.migrateCommand(),
			a.versionCommand(),
			a.userCommand(),
			a.backupCommand(),
			a.restoreCommand(),
			a.configCommand(),
		},
	}
}

// ExitCode is the process exit code for an error returned by RunContext:
// 0 for nil, the code of a ucli.ExitCoder, else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec ucli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}

// Version picks the version string: the one stamped by the linker
// (-ldflags "-X main.version=v1.2.3"), else the module version recorded by
// `go install hearth@vX`, else the VCS revision, else "dev".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}

// dataDirFlag is the --data-dir flag every command that touches the
// database takes; it wins over DATA_DIR.
func dataDirFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "data-dir", Usage: "data directory (default: $DATA_DIR, else ./data)"}
}

// dataDir resolves --data-dir, then DATA_DIR, then ./data. fromFlag says the
// flag decided, so config can be told (its own DATA_DIR reading would differ).
func (a *app) dataDir(c *ucli.Context) (dir string, fromFlag bool) {
	if c.IsSet("data-dir") && c.String("data-dir") != "" {
		return c.String("data-dir"), true
	}
	if v, ok := a.getenv("DATA_DIR"); ok && v != "" {
		return v, false
	}
	return "./data", false
}

// configEnv is the environment config.Load sees: the process environment
// with the flags that override variables applied.
func (a *app) configEnv(over map[string]string) config.Getenv {
	if len(over) == 0 {
		return a.getenv
	}
	return config.WithOverrides(a.getenv, over)
}

// existingDB returns the database path in dir, or an error that says how to
// create it.
func existingDB(dir string) (string, error) {
	path := filepath.Join(dir, dbFile)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no database at %s (run `hearth migrate` or `hearth serve` first, or pass --data-dir)", path)
		}
		return "", err
	}
	return path, nil
}

// usageError reports wrong arguments (exit code 2) with the command's usage line.
func usageError(c *ucli.Context, msg string) error {
	return ucli.Exit(fmt.Sprintf("%s\nusage: %s %s", msg, c.Command.HelpName, c.Command.ArgsUsage), 2)
}

func (a *app) versionCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "version",
		Usage: "print the version",
		Action: func(c *ucli.Context) error {
			_, err := fmt.Fprintln(a.stdout, a.version)
			return err
		},
	}
}
