package ledger_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
)

// A task runner opens the ledger the ghonce command would use: the one
// GHONCE_LEDGER names, else the default under the user's state directory.
func ExampleDefaultPath() {
	state, err := os.MkdirTemp("", "ghonce-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)
	env := map[string]string{"HOME": "/home/agent", "XDG_STATE_HOME": state} // os.Getenv in a real runner
	getenv := func(k string) string { return env[k] }

	loc, err := ledger.DefaultPath(getenv)
	if err != nil {
		log.Fatal(err)
	}
	l, err := store.Open(context.Background(), loc, store.Options{Create: store.CreateForAction})
	if err != nil {
		log.Fatal(err) // names the ledger and what went wrong, "open ledger …: …"
	}
	defer l.Close()
	rel, _ := filepath.Rel(state, l.Location)
	fmt.Println("ledger:", rel, "created:", l.Created)

	env["GHONCE_LEDGER"] = "postgres://agent@db.internal/ghonce"
	loc, _ = ledger.DefaultPath(getenv)
	fmt.Println("with GHONCE_LEDGER set:", loc)
	// Output:
	// ledger: ghonce/ledger.db created: true
	// with GHONCE_LEDGER set: postgres://agent@db.internal/ghonce
}
