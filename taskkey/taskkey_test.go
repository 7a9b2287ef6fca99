package taskkey

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
)

// Golden vectors pin the version 1 derivation. They were cross-checked with an
// independent implementation (Python hashlib + base64) of the documented
// encoding. If one of these changes, every ledger and every tag already on
// GitHub stops matching: never edit them, add a new version instead.
var golden = []struct {
	id   Identity
	key  string
	name string
}{
	{Identity{"ISSUE-42", "pr-create", "pr", "octo-org/hello-world", "main"}, "gk1_gi7jplks6mtj6gbehucnjawrzdwv4isr", "ghonce/issue-42-gi7jplks6mtj"},
	{Identity{"ISSUE-42", "comment", "issue-comment", "octo-org/hello-world", "42"}, "gk1_ksvtf7tmwhgvuabply2c7iotdqy5ekuk", "ghonce/issue-42-ksvtf7tmwhgv"},
	{Identity{"weekly-report", "notify", "exec", "", ""}, "gk1_4tgiqut7cgm4xoc7vled42a7welu5g66", "ghonce/weekly-report-4tgiqut7cgm4"},
	{Identity{"ü/ñ", "s", "branch", "a/b", "x"}, "gk1_ngkzvs23vgoki3siqpt2towsib2v6ihy", "ghonce/ngkzvs23vgok"},
}

func TestKeyGolden(t *testing.T) {
	for _, g := range golden {
		if got := Key(g.id); got != g.key {
			t.Errorf("Key(%+v) = %s, want %s", g.id, got, g.key)
		}
		if got := BranchName(g.id); got != g.name {
			t.Errorf("BranchName(%+v) = %s, want %s", g.id, got, g.name)
		}
		if err := CheckBranchName(BranchName(g.id)); err != nil {
			t.Errorf("BranchName(%+v) is not a valid branch: %v", g.id, err)
		}
		if !Valid(g.key) {
			t.Errorf("Valid(%s) = false", g.key)
		}
		if l := Label(g.key); len(l) > MaxLabel {
			t.Errorf("Label(%s) is %d characters, over %d", g.key, len(l), MaxLabel)
		}
	}
}

func TestKeyRepoIsCaseInsensitiveOtherFieldsAreNot(t *testing.T) {
	base := Identity{"T", "s", "pr", "octo-org/hello-world", "main"}
	upper := base
	upper.Repo = "Octo-Org/Hello-World"
	if Key(base) != Key(upper) {
		t.Error("repository case changed the key; GitHub treats owner/name case-insensitively")
	}
	for _, mod := range []func(*Identity){
		func(i *Identity) { i.Task = "t" },
		func(i *Identity) { i.Step = "S" },
		func(i *Identity) { i.Kind = "issue" },
		func(i *Identity) { i.Target = "Main" },
	} {
		other := base
		mod(&other)
		if Key(other) == Key(base) {
			t.Errorf("%+v and %+v share a key", other, base)
		}
	}
}

func TestKeySeparatorsAreInjective(t *testing.T) {
	// Moving bytes between adjacent fields must change the key.
	a := Identity{Task: "a|b", Step: "c", Kind: "pr", Repo: "o/r"}
	b := Identity{Task: "a", Step: "b|c", Kind: "pr", Repo: "o/r"}
	c := Identity{Task: "a,1:b", Step: "c", Kind: "pr", Repo: "o/r"}
	d := Identity{Task: "a", Step: "1:b,c", Kind: "pr", Repo: "o/r"}
	seen := map[string]Identity{}
	for _, id := range []Identity{a, b, c, d} {
		k := Key(id)
		if prev, dup := seen[k]; dup {
			t.Fatalf("%+v and %+v share key %s", prev, id, k)
		}
		seen[k] = id
	}
}

func TestMarkerRoundTrip(t *testing.T) {
	key := golden[0].key
	body := WithMarker(key, "Fixes #42.\n\nSome text.")
	if got, ok := ParseMarker(body); !ok || got != key {
		t.Fatalf("ParseMarker(WithMarker) = %q, %v", got, ok)
	}
	if !HasMarker(strings.ReplaceAll(body, "\n", "\r\n"), key) {
		t.Error("a CRLF body lost its marker")
	}
	if got := WithoutMarker(key, body); got != "Fixes #42.\n\nSome text." {
		t.Errorf("WithoutMarker = %q", got)
	}
}

// The link marker survives what strips HTML comments: a sanitizer in
// front of GitHub (the comment gone, its line left blank or removed), a
// person's edit; the body less its tags is the same either way.
func TestLinkMarkerSurvivesStrippedComments(t *testing.T) {
	key := golden[0].key
	body := WithMarker(key, "Fixes #42.")
	for name, b := range map[string]string{
		"comment removed, line kept": strings.Replace(body, Marker(key), "", 1),
		"comment and line removed":   strings.Replace(body, Marker(key)+"\n", "", 1),
		"CRLF":                       strings.ReplaceAll(strings.Replace(body, Marker(key), "", 1), "\n", "\r\n"),
		"only the comment left":      Marker(key) + "\nFixes #42.",
	} {
		if !HasMarker(b, key) {
			t.Errorf("%s: %q lost its key", name, b)
		}
		if got := strings.TrimRight(WithoutMarker(key, b), "\r\n"); got != "Fixes #42." && got != "Fixes #42.\r" {
			t.Errorf("%s: WithoutMarker = %q", name, got)
		}
	}
}

func TestMarkerRejectsLookAlikes(t *testing.T) {
	key := golden[0].key
	for name, body := range map[string]string{
		"quoted":           "> " + Marker(key) + "\nI saw this",
		"later in body":    "hello\n" + Marker(key),
		"prefix":           "x" + Marker(key),
		"longer key":       "<!-- ghonce:key=" + key + "a -->",
		"shorter key":      "<!-- ghonce:key=" + key[:len(key)-1] + " -->",
		"other version":    "<!-- ghonce:key=gk2_" + key[4:] + " -->",
		"uppercase key":    "<!-- ghonce:key=" + strings.ToUpper(key) + " -->",
		"trailing text":    Marker(key) + " extra",
		"empty":            "",
		"no close":         "<!-- ghonce:key=" + key,
		"invalid charset":  "<!-- ghonce:key=gk1_" + strings.Repeat("1", 32) + " -->",
		"quoted link":      "> " + LinkMarker(key) + "\nI saw this",
		"link later":       "hello\n" + LinkMarker(key),
		"link indented":    "    " + LinkMarker(key),
		"link, text after": LinkMarker(key) + " extra",
		"link, bad key":    "[ghonce-key]: # (gk1_" + strings.Repeat("1", 32) + ")",
	} {
		if _, ok := ParseMarker(body); ok {
			t.Errorf("%s: ParseMarker accepted %q", name, body)
		}
	}
	if HasMarker(WithMarker(golden[1].key, "x"), key) {
		t.Error("HasMarker matched another key's marker")
	}
}

func TestCheckBody(t *testing.T) {
	key := golden[0].key
	room := MaxBody - len(WithMarker(key, ""))
	if err := CheckBody(key, strings.Repeat("é", room)); err != nil {
		t.Errorf("a body that fits was refused: %v", err)
	}
	err := CheckBody(key, strings.Repeat("a", room+10))
	if err == nil || !strings.Contains(err.Error(), "shorten it by 10") {
		t.Errorf("oversized body: err = %v, want a hint to shorten it by 10", err)
	}
}

func TestCheckBranchName(t *testing.T) {
	for _, ok := range []string{"main", "feature/x", "ghonce/issue-42-abc", "a.b", "release-1.2"} {
		if err := CheckBranchName(ok); err != nil {
			t.Errorf("CheckBranchName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "a..b", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, ".hidden", "x/.y", "a.lock", "x/y.lock", "a@{b", "end/", "end.", "/start", "-start", "a//b", "refs/heads/x", "@", "tab\tx"} {
		if err := CheckBranchName(bad); err == nil {
			t.Errorf("CheckBranchName(%q) = nil, want an error", bad)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"ISSUE-42":               "issue-42",
		"  Fix: the bug!! ":      "fix-the-bug",
		"ü/ñ":                    "",
		"a__b":                   "a-b",
		strings.Repeat("ab", 30): strings.Repeat("ab", 20),
	} {
		if got := Slug(in, 40); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// Task and step ids are cleaned by one rule before the key is derived: a
// runner that reads its task from a file with a trailing newline gets the
// same key as one that passes it on the command line, and the golden keys
// of clean ids are the ones derived before the rule existed.
func TestKeyCleansSurroundingWhiteSpace(t *testing.T) {
	g := golden[0]
	for _, task := range []string{" ISSUE-42", "ISSUE-42 ", "ISSUE-42\n", "\tISSUE-42\r\n"} {
		id := g.id
		id.Task = task
		if got := Key(id); got != g.key {
			t.Errorf("Key(task %q) = %s, want the golden %s", task, got, g.key)
		}
		if got := BranchName(id); got != g.name {
			t.Errorf("BranchName(task %q) = %s, want %s", task, got, g.name)
		}
		if err := id.Validate(); err != nil {
			t.Errorf("task %q refused: %v", task, err)
		}
	}
	id := g.id
	id.Step = " pr-create\n"
	if Key(id) != g.key {
		t.Errorf("step with surrounding white space changed the key")
	}
	// Inner white space and case stay part of the id.
	for _, task := range []string{"ISSUE 42", "issue-42"} {
		id := g.id
		id.Task = task
		if Key(id) == g.key {
			t.Errorf("task %q shares the key of ISSUE-42", task)
		}
	}
}

func TestCheckIDRefusesWhatCannotNameWork(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty"}, {"  \n", "empty"},
		{"T-1\nT-2", "control character"}, {"a\x00b", "control character"}, {"a\x1b[31m", "control character"},
		{"\xff\xfe", "UTF-8"}, {strings.Repeat("x", MaxID+1), "over the limit"},
	} {
		t.Run(fmt.Sprintf("%.20q", c.in), func(t *testing.T) {
			err := CheckID("task", c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckID(%q) = %v, want an error saying %q", c.in, err, c.want)
			}
		})
	}
	for _, ok := range []string{"T-1", "ü/ñ", "ISSUE 42", strings.Repeat("é", MaxID)} {
		if err := CheckID("task", ok); err != nil {
			t.Errorf("CheckID(%q) = %v, want nil", ok, err)
		}
	}
}

func TestValidateIdentity(t *testing.T) {
	// The error names the field, never a front's flag for it.
	var inv *effect.InvalidError
	if err := (Identity{Task: " ", Step: "s", Kind: "pr"}).Validate(); !errors.As(err, &inv) || inv.Field != "task" || strings.Contains(err.Error(), "--") {
		t.Errorf("empty task: %v; want an *effect.InvalidError of field task, naming no flag", err)
	}
	if err := (Identity{Task: "t", Step: "s", Kind: "pr"}).Validate(); err != nil {
		t.Errorf("valid identity refused: %v", err)
	}
}

func FuzzKey(f *testing.F) {
	f.Add("ISSUE-42", "pr-create", "main", "a", "b")
	f.Add("a|b", "c", "", "a", "b|c")
	f.Add("1:a,", "", "x", "1:", "a,")
	f.Fuzz(func(t *testing.T, task, step, target, task2, step2 string) {
		id1 := Identity{Task: task, Step: step, Kind: "pr", Repo: "o/r", Target: target}
		id2 := Identity{Task: task2, Step: step2, Kind: "pr", Repo: "o/r", Target: target}
		k1 := Key(id1)
		if k1 != Key(id1) {
			t.Fatal("key is not stable")
		}
		if !Valid(k1) {
			t.Fatalf("Key produced an invalid key %q", k1)
		}
		if (CleanID(task) != CleanID(task2) || CleanID(step) != CleanID(step2)) && k1 == Key(id2) {
			t.Fatalf("different identities %+v and %+v share key %s", id1, id2, k1)
		}
		if err := CheckBranchName(BranchName(id1)); err != nil {
			t.Fatalf("BranchName(%+v): %v", id1, err)
		}
		if k, ok := ParseMarker(WithMarker(k1, task)); !ok || k != k1 {
			t.Fatalf("marker round trip lost key %s", k1)
		}
	})
}

func FuzzParseMarker(f *testing.F) {
	f.Add("<!-- ghonce:key=gk1_gi7jplks6mtj6gbehucnjawrzdwv4isr -->\nbody")
	f.Add("> <!-- ghonce:key=gk1_gi7jplks6mtj6gbehucnjawrzdwv4isr -->")
	f.Add("<!-- ghonce:key= -->")
	f.Add("\r\n")
	f.Add("\n[ghonce-key]: # (gk1_gi7jplks6mtj6gbehucnjawrzdwv4isr)\nbody")
	f.Add("> [ghonce-key]: # (gk1_gi7jplks6mtj6gbehucnjawrzdwv4isr)")
	f.Fuzz(func(t *testing.T, body string) {
		key, ok := ParseMarker(body)
		if !ok {
			return
		}
		// A marker that parses is exactly one ghonce would write.
		if !Valid(key) {
			t.Fatalf("accepted invalid key %q", key)
		}
		first, _, _ := strings.Cut(body, "\n")
		firstText, _, _ := strings.Cut(strings.TrimLeft(body, "\r\n"), "\n")
		if strings.TrimSuffix(first, "\r") != Marker(key) && strings.TrimSuffix(firstText, "\r") != LinkMarker(key) {
			t.Fatalf("accepted %q: neither its first line is the marker nor its first non-blank line the link marker ghonce writes", body)
		}
	})
}
