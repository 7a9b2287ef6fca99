package cli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/actions"
)

// A token ghonce mints from a GitHub App's key, in the stateless format
// GitHub mints now (ghs_APPID_JWT, about 520 characters, two dots), is
// announced to the Actions runner (::add-mask::) before its first use, so
// the runner masks it in the job's log, and shows nowhere else. Outside
// Actions nothing is announced; nor by the gh shim, whose stderr goes to
// whoever called gh (an agent), not to the runner.
func TestMintedTokensAreMaskedBeforeUse(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const appID = 31337
	w.fake.AddApp(fixtures.App{ID: appID, Slug: "mask-app", PublicKey: &k.PublicKey})
	w.fake.InstallApp(appID, testOwner, testName)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	asApp := map[string]string{"GH_TOKEN": "", "GHONCE_APP_ID": strconv.Itoa(appID), "GHONCE_APP_PRIVATE_KEY": keyPEM}
	inActions := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "ci", "GITHUB_JOB": "build", "GITHUB_RUN_ID": "77",
		"GH_TOKEN": "", "GHONCE_APP_ID": strconv.Itoa(appID), "GHONCE_APP_PRIVATE_KEY": keyPEM}
	mask := regexp.MustCompile(`(?m)^::add-mask::(.*)$`)

	r := w.run("", inActions, "issue", "create", "--task", "M-1", "--title", "t", "--body", "b", "--repo", testRepo)
	if r.code != 0 {
		t.Fatalf("issue create as the App in Actions: exit %d\n%s", r.code, actions.Scrub(r.stderr, nil))
	}
	m := mask.FindAllStringSubmatchIndex(r.stderr, -1)
	if len(m) != 1 {
		t.Fatalf("%d ::add-mask:: lines, want one for the one token minted:\n%s", len(m), actions.Scrub(r.stderr, nil))
	}
	tok := r.stderr[m[0][2]:m[0][3]]
	if len(tok) < 500 || strings.Count(tok, ".") != 2 || !strings.HasPrefix(tok, "ghs_") {
		t.Fatalf("the masked value has %d characters and %d dots: want the minted stateless token", len(tok), strings.Count(tok, "."))
	}
	if used := strings.Index(r.stderr, "authenticated as GitHub App"); used < m[0][1] {
		t.Fatal("the token was announced after ghonce began to act with it")
	}
	rest := r.stdout + r.stderr[:m[0][0]] + r.stderr[m[0][1]:]
	if strings.Contains(rest, tok[len(tok)-40:]) || strings.Contains(rest, "ghs_") {
		t.Fatal("the minted token shows outside its ::add-mask:: line")
	}

	for name, run := range map[string]func() cliRun{
		"outside Actions": func() cliRun {
			return w.run("", asApp, "issue", "create", "--task", "M-2", "--title", "t", "--body", "b", "--repo", testRepo)
		},
		"the gh shim in Actions": func() cliRun {
			env := map[string]string{"GHONCE_TASK": "M-3"}
			for k, v := range inActions {
				env[k] = v
			}
			return w.gh("", env, "issue", "create", "--title", "t", "--body", "b", "--repo", testRepo)
		},
	} {
		r := run()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, actions.Scrub(r.stderr, nil))
		}
		if strings.Contains(r.stdout+r.stderr, "add-mask") || strings.Contains(r.stdout+r.stderr, "ghs_") {
			t.Errorf("%s: a token or its announcement in the output:\n%s", name, actions.Scrub(r.stderr, nil))
		}
	}
}
