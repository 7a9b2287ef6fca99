// Command ghonce makes an agent's side effects on GitHub happen once per
// (task, step). See `ghonce --help` and README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/ghonce/ghonce/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if filepath.Base(os.Args[0]) == "gh" { // invoked through `ghonce shim DIR`
		code = cli.GhMain(ctx, os.Args, cli.System())
	} else {
		code = cli.Main(ctx, os.Args[1:], cli.System())
	}
	stop()
	os.Exit(code)
}
