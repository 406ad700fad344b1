// Command hearth is the single Hearth binary: `hearth serve` runs the server,
// the other commands operate on DATA_DIR (see `hearth --help` and README.md).
// All wiring lives in package cli; this file only builds the app and runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"hearth/cli"
)

// version is stamped by the linker and never assigned at run time:
//
//	go build -ldflags "-X main.version=v1.2.3" .
//
// The Go linker can only set a package-level string, so this is the one
// package-level variable; main copies it into the app's Options at once.
// Unset, cli.Version falls back to the module or VCS version, else "dev".
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := cli.New(cli.Options{Version: cli.Version(version)})
	err := app.RunContext(ctx, os.Args)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth:", err)
	}
	os.Exit(cli.ExitCode(err))
}
