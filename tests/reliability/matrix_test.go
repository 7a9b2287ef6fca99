package reliability

import (
	"flag"
	"os"
	"testing"
	"time"
)

var (
	flagProfile = flag.String("reliability.profile", "smoke", "matrix size: smoke (go test), short (CI) or full (make reliability)")
	flagSeed    = flag.Int64("reliability.seed", 0, "seed of the randomised kill loop (0: from the clock; printed)")
	flagOut     = flag.String("reliability.out", "", "write the report (Markdown) to this file")
	flagParts   = flag.String("reliability.parts", "", "comma-separated parts to run (kill,random,race,fault,pidns,pg,gh,bad,audit; pg runs pidns on Postgres when pidns runs); default all")
	flagKeep    = flag.Bool("reliability.keep", false, "keep the work directory (ledgers, bodies) and print where")
)

func TestMain(m *testing.M) {
	// The matrix runs this binary as the guarded command of `ghonce exec`.
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(EffectMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestMatrix is the reliability matrix. Without flags it runs the smoke
// profile; `make reliability` runs the full one and writes
// docs/reliability.md.
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the reliability matrix runs processes; skipped with -short")
	}
	prof, ok := profiles[*flagProfile]
	if !ok {
		t.Fatalf("unknown -reliability.profile %q: want smoke, short or full", *flagProfile)
	}
	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("profile %s, seed %d", prof.name, seed)
	rep, err := Run(t.Context(), Config{Profile: prof, Seed: seed, Parts: *flagParts, Out: *flagOut, Keep: *flagKeep, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if *flagOut != "" {
		t.Logf("report written to %s\n%s", *flagOut, rep.Summary())
	} else {
		t.Logf("\n%s", rep.Markdown())
	}
	fails := rep.Failures()
	for _, f := range fails {
		t.Error(f)
	}
	if len(fails) > 0 {
		t.Errorf("%d failed expectation(s), profile %s, seed %d (each above names its part and row): rerun one part alone with -reliability.parts=PART -reliability.seed=%d", len(fails), prof.name, seed, seed)
	}
}
