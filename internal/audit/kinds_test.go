package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/audittest"
	"github.com/ghonce/ghonce/tests/testworld"
)

// TestEveryKindsExampleMadeTwice: for every kind the audit accepts, its
// Face's Example made the naive way (the kind's Create, one key, no
// ledger) twice by us, 20 s apart, and once by a person. Where GitHub
// holds two of ours, the audit finds one group of the two, the older
// kept, the newer open and the same byte for byte, and nothing of the
// person's; where GitHub kept one (it refused the second, or the second
// changed nothing), no group. A kind --kind must ask for is not read by
// default. Then `ghonce audit --apply` does what the kind declares:
// settles the duplicate (Settle: closed, or deleted) and leaves the kept
// one, or writes nothing and says why (Leave). A new kind is run here
// from its Face; a shape its example does not make (a draft release, a
// label a person removed and we added again) is its own test's.
func TestEveryKindsExampleMadeTwice(t *testing.T) {
	for _, kind := range audit.AllKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rule := audit.Rule(kind)
			clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
			w := testworld.New(t, testworld.Fake(fixtures.Options{Now: clock.Now}))
			w.SeedExamples()
			ctx := context.Background()
			r := ghcheck.Repo{Owner: testworld.Owner, Name: testworld.Name}
			f, _ := kinds.FaceOf(kind)
			v, err := kinds.DecodeValue(kind, []byte(f.Example))
			if err != nil {
				t.Fatalf("its example: %v", err)
			}
			p, err := reconcile.Prepare(reconcile.Action{Task: audittest.NaiveTask, Repo: testworld.Repo, Spec: v.(reconcile.Spec)})
			if err != nil {
				t.Fatalf("its example: %v", err)
			}
			spec, key := p.Action().Spec, p.Key()
			client := func(tok string) *ghcheck.Client {
				return w.Client(ghcheck.Options{Token: tok, Sleep: func(context.Context, time.Duration) error { return nil }})
			}
			if ch, ok := spec.(reconcile.Chooser); ok && ch.Chooses() { // what the engine's look-up chooses, once
				spec, _ = ch.Choose(ctx, &reconcile.Env{GitHub: client(testworld.Token), Repo: r}, key)
			}
			naive := func(tok string) (effect.Artifact, error) {
				defer clock.Add(20 * time.Second)
				return spec.Create(ctx, &reconcile.Env{GitHub: client(tok), Repo: r}, key)
			}
			first, err := naive(testworld.Token)
			if err != nil {
				t.Fatalf("first create: %v", err)
			}
			second, err := naive(testworld.Token)
			var ce *effect.CreateError
			if err != nil && (!errors.As(err, &ce) || ce.Class != effect.ClassExists && ce.Class != effect.ClassRefused) {
				t.Fatalf("second create: %v, want made, or refused with nothing made", err)
			}
			// GitHub holds two of ours: the second is another artifact.
			two := err == nil && (second.Number != first.Number || second.ID != first.ID) && rule.Listing != ""
			_, perr := naive(testworld.StrangerToken) // a person's copy, when GitHub lets them make it: never ours
			t.Logf("second create: %v; GitHub holds two of ours: %v; a person's copy: %v", err, two, perr)

			if rule.Optional {
				rep, err := audit.Find(ctx, client(testworld.Token), audit.Options{Repo: r})
				if err != nil || len(rep.Groups) != 0 || rep.Listed[rule.Listing] != 0 {
					t.Fatalf("default kinds: %v, listed %v, groups %+v; want %s's listing unread (only --kind %s reads it)", err, rep.Listed, rep.Groups, kind, kind)
				}
			}
			find := func() *audit.Report {
				t.Helper()
				rep, err := audit.Find(ctx, client(testworld.Token), audit.Options{Repo: r, Kinds: []string{kind}})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			same := func(a audit.Artifact, e effect.Artifact) bool {
				if audit.Numbered(kind) {
					return a.Number == e.Number
				}
				return a.ID == e.ID
			}
			rep := find()
			if !two {
				if len(rep.Groups) != 0 {
					t.Fatalf("GitHub holds one of ours (second create: %v, %+v), yet groups %+v", err, second, rep.Groups)
				}
			} else {
				if len(rep.Groups) != 1 {
					t.Fatalf("groups %+v, want one: the two we made", rep.Groups)
				}
				g := rep.Groups[0]
				if g.Kind != kind || !same(g.Keep, first) || len(g.Duplicates) != 1 || !same(g.Duplicates[0], second) {
					t.Fatalf("group %+v: want %+v kept and %+v its one duplicate", g, first, second)
				}
				d := g.Duplicates[0]
				if !d.Ours || !d.Open || d.Differs != "" || d.AfterSeconds == nil || *d.AfterSeconds < 20 || g.Rule == "" || g.Detail == "" || rep.OpenDuplicates != 1 {
					t.Errorf("duplicate %+v (rule %q, detail %q, open %d): want ours, open, the same, 20 s or more later", d, g.Rule, g.Detail, rep.OpenDuplicates)
				}
				var on struct{ Number int } // the example's thread, for a kind on one
				_ = json.Unmarshal([]byte(f.Example), &on)
				if strings.Contains(rule.Ref, "{thread}") && g.Keep.Thread != on.Number || strings.Contains(g.Keep.Ref(kind), "{") {
					t.Errorf("kept %s (thread %d): want it named, on #%d", g.Keep.Ref(kind), g.Keep.Thread, on.Number)
				}
				if g.Detail != rule.Detail && g.Evidence == audit.EvidenceExact {
					t.Errorf("detail %q, want the kind's %q", g.Detail, rule.Detail)
				}
			}

			// --apply, through the CLI.
			writes := w.GitHub.Writes()
			var out, errb bytes.Buffer
			env := map[string]string{"GH_TOKEN": testworld.Token, "GITHUB_API_URL": w.GitHub.URL(), "GH_REPO": testworld.Repo,
				"GHONCE_LEDGER": filepath.Join(t.TempDir(), "ledger.db")}
			code := cli.Main(ctx, []string{"audit", "--apply", "--json", "--since", "0", "--kind", kind}, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb,
				Getenv: func(k string) string { return env[k] }, Now: clock.Now, Executable: os.Executable})
			var got struct {
				Actions []struct{ Target, Skipped, Outcome string }
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("--apply: exit %d, %v: %s %s", code, err, out.String(), errb.String())
			}
			after := find()
			switch {
			case !two:
				if code != failure.ExitOK || len(got.Actions) != 0 || w.GitHub.Writes() != writes {
					t.Fatalf("--apply with nothing to settle: exit %d, actions %+v, %d writes", code, got.Actions, w.GitHub.Writes()-writes)
				}
			case rule.Settle == "":
				if code != failure.ExitDuplicates || len(got.Actions) != 1 || got.Actions[0].Skipped != rule.Leave || w.GitHub.Writes() != writes {
					t.Fatalf("--apply: exit %d, actions %+v, %d writes; want the duplicate left alone, saying %q, nothing written", code, got.Actions, w.GitHub.Writes()-writes, rule.Leave)
				}
				if len(after.Groups) != 1 || after.OpenDuplicates != 1 {
					t.Fatalf("after --apply: groups %+v, want the pair still there", after.Groups)
				}
			default:
				if code != failure.ExitOK || len(got.Actions) != 1 || got.Actions[0].Skipped != "" || got.Actions[0].Outcome == "" || w.GitHub.Writes() == writes {
					t.Fatalf("--apply: exit %d, actions %+v (stderr %s); want the duplicate settled (%s)", code, got.Actions, errb.String(), rule.Settle)
				}
				// A deleted duplicate is gone from the listing; a closed one
				// is listed, closed: either way nothing is open, and the kept
				// one is as it was.
				want := map[bool]int{true: 1}[rule.Settle != "delete"]
				if len(after.Groups) != want || after.OpenDuplicates != 0 || rep.Listed[rule.Listing]-after.Listed[rule.Listing] != 1-want {
					t.Fatalf("after --apply (%s): listed %v (before %v), groups %+v; want %d group(s), none open", rule.Settle, after.Listed, rep.Listed, after.Groups, want)
				}
				for _, g := range after.Groups {
					if !same(g.Keep, first) || !g.Keep.Open {
						t.Errorf("after --apply: kept %+v, want %+v, open", g.Keep, first)
					}
				}
			}
		})
	}
}
