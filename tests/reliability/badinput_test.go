package reliability

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	_ "github.com/mattn/go-sqlite3" // another program's database, for a case

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/taskkey"
)

// badCase is one kind of bad input.
type badCase struct {
	name string
	// args are the arguments; "LEDGER" is replaced by the case's ledger
	// path and "USER" by the user's directory.
	args []string
	exit int
	want string // the message must contain this
	// reads: the case may ask GitHub (reads only); otherwise no request at all.
	reads bool
	// setup prepares the case's files; it may change the process.
	setup func(b *badRun) error
	// ledgerMayExist: the ledger file may be left behind (it is ghonce's,
	// not the user's); otherwise a usage error must not create it.
	ledgerMayExist bool
}

// badRun is one case's files and process.
type badRun struct {
	w       *world
	userDir string // the user's files: working directory, bodies
	ledger  string
	p       proc
	skip    string // why the case cannot run here
	// restore are directories made read-only, to be made writable again.
	restore []string
}

func prArgs(extra ...string) []string {
	return append([]string{"pr", "create", "--repo", owner + "/" + repo, "--task", "BAD-1", "--base", "main", "--head", "agent/bad-input",
		"--title", "Fix", "--body-file", "USER/body.md", "--ledger", "LEDGER"}, extra...)
}

func replaceArg(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == flag && i+1 < len(out) {
			out[i+1] = value
		}
	}
	return out
}

func badCases(m *matrix) []badCase {
	long := strings.Repeat("x", taskkey.MaxBody-len([]rune(taskkey.Marker("gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))))
	return []badCase{
		{name: "corrupt ledger: a file that is not SQLite", args: prArgs(), exit: 1, want: "not a ghonce ledger",
			setup: func(b *badRun) error {
				b.ledger = filepath.Join(b.userDir, "notes.db")
				return os.WriteFile(b.ledger, []byte("my notes, not a database\n"), 0o644)
			}},
		{name: "corrupt ledger: a ghonce ledger cut short", args: prArgs(), exit: 1, want: "not a ghonce ledger",
			setup: func(b *badRun) error {
				data, err := b.realLedger()
				if err != nil {
					return err
				}
				b.ledger = filepath.Join(b.userDir, "cut.db")
				return os.WriteFile(b.ledger, data[:len(data)/2+100], 0o600)
			}},
		{name: "corrupt ledger: the page holding this key's entry damaged (rerun of a done key)", exit: 1, want: "malformed",
			setup: func(b *badRun) error {
				data, err := b.realLedger()
				if err != nil {
					return err
				}
				// The entries table holds one entry: its root page is the
				// leaf with the key. Damage its cell pointers and the free
				// space after them.
				page, err := rootPage(b.source().ledger, "entries")
				if err != nil {
					return err
				}
				start := (page-1)*4096 + 8
				for i := start; i < len(data) && i < start+2040; i++ {
					data[i] = 0xA5
				}
				b.ledger = filepath.Join(b.userDir, "damaged.db")
				b.p.args = b.sourceArgs()
				return os.WriteFile(b.ledger, data, 0o600)
			}},
		{name: "corrupt ledger: its schema page damaged", args: prArgs(), exit: 1, want: "ledger",
			setup: func(b *badRun) error {
				data, err := b.realLedger()
				if err != nil {
					return err
				}
				for i := 100; i < 2048; i++ {
					data[i] = 0xA5
				}
				b.ledger = filepath.Join(b.userDir, "damaged-schema.db")
				return os.WriteFile(b.ledger, data, 0o600)
			}},
		{name: "another program's SQLite database as the ledger", args: prArgs(), exit: 1, want: "not a ghonce ledger",
			setup: func(b *badRun) error {
				b.ledger = filepath.Join(b.userDir, "app.db")
				db, err := sql.Open("sqlite3", b.ledger)
				if err != nil {
					return err
				}
				defer db.Close()
				_, err = db.Exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)")
				return err
			}},
		{name: "ledger in a read-only directory (new ledger)", args: prArgs(), exit: 1, want: "check the permissions",
			setup: func(b *badRun) error {
				dir := filepath.Join(b.userDir, "ro")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				b.ledger = filepath.Join(dir, "ledger.db")
				return b.readOnly(dir)
			}},
		{name: "ledger in a read-only directory (ledger in use)", args: prArgs(), exit: 1, want: "ledger",
			setup: func(b *badRun) error {
				dir := filepath.Join(b.userDir, "ro-existing")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				data, err := b.realLedger()
				if err != nil {
					return err
				}
				b.ledger = filepath.Join(dir, "ledger.db")
				if err := os.WriteFile(b.ledger, data, 0o600); err != nil {
					return err
				}
				return b.readOnly(dir)
			}},
		{name: "full disk while the ledger is created (RLIMIT_FSIZE 0)", args: prArgs(), exit: 1, want: "ledger", ledgerMayExist: true,
			setup: func(b *badRun) error {
				b.p.wrap = []string{"/bin/sh", "-c", `ulimit -f 0 && exec "$0" "$@"`}
				return nil
			}},
		{name: "full disk while the intent is recorded (RLIMIT_FSIZE 64 blocks, a 180 KB body)", args: prArgs(), exit: 1, want: "ledger", ledgerMayExist: true,
			setup: func(b *badRun) error {
				data, err := b.realLedger()
				if err != nil {
					return err
				}
				b.ledger = filepath.Join(b.w.dir, "bad-full", "ledger.db")
				if err := os.MkdirAll(filepath.Dir(b.ledger), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(b.ledger, data, 0o600); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(b.userDir, "body.md"), []byte(strings.Repeat("日", 60000)), 0o644); err != nil {
					return err
				}
				b.p.wrap = []string{"/bin/sh", "-c", `ulimit -f 64 && exec "$0" "$@"`}
				return nil
			}},
		{name: "no token", args: prArgs(), exit: 2, want: "no GitHub token: set GH_TOKEN",
			setup: func(b *badRun) error { b.p.noToken = true; return nil }},
		{name: "a token GitHub rejects (401)", args: prArgs(), exit: 1, want: "token rejected by GitHub (401 Bad credentials): check GH_TOKEN", reads: true, ledgerMayExist: true,
			setup: func(b *badRun) error {
				b.p.token = "ghp_rejected" + m.token[len(m.token)-20:]
				m.addSecret(b.p.token)
				return nil
			}},
		{name: "a token with a trailing newline", args: prArgs(), exit: 2, want: "token contains spaces or control characters",
			setup: func(b *badRun) error { b.p.token = m.token + "\n"; return nil }},
		{name: "malformed repository (no owner)", args: replaceArg(prArgs(), "--repo", "hello-world"), exit: 2, want: "invalid repository"},
		{name: "a repository URL on another host than the API's", args: replaceArg(prArgs(), "--repo", "https://github.com/octo-org/hello-world"), exit: 2, want: "is on github.com, but GITHUB_API_URL is"},
		{name: "malformed repository (three parts)", args: replaceArg(prArgs(), "--repo", "octo-org/hello-world/x"), exit: 2, want: "invalid repository"},
		{name: "empty task", args: replaceArg(prArgs(), "--task", ""), exit: 2, want: "no task"},
		{name: "blank task", args: replaceArg(prArgs(), "--task", "   "), exit: 2, want: "no task"},
		{name: "invalid branch name (--head with ..)", args: replaceArg(prArgs(), "--head", "fix..42"), exit: 2, want: "invalid branch name"},
		{name: "invalid branch name (branch create with a space)", exit: 2, want: "invalid branch name",
			args: []string{"branch", "create", "my branch", "--sha", strings.Repeat("a", 40), "--repo", owner + "/" + repo, "--task", "BAD-1", "--ledger", "LEDGER"}},
		{name: "invalid branch name (file put --branch ending in .lock)", exit: 2, want: "invalid branch name",
			args: []string{"file", "put", "a.txt", "--branch", "docs.lock", "-m", "m", "--content", "x", "--repo", owner + "/" + repo, "--task", "BAD-1", "--ledger", "LEDGER"}},
		{name: "label over 50 characters", args: prArgs("--label", strings.Repeat("l", 51)), exit: 2, want: "over GitHub's limit of 50"},
		{name: "body over 65,536 characters with the marker", args: prArgs(), exit: 2, want: "over GitHub's limit of 65536",
			setup: func(b *badRun) error {
				return os.WriteFile(filepath.Join(b.userDir, "body.md"), []byte(long+"!"), 0o644)
			}},
		{name: "body file missing", args: replaceArg(prArgs(), "--body-file", "USER/missing.md"), exit: 2, want: "read --body-file"},
		{name: "unknown flag", args: prArgs("--frobnicate"), exit: 2, want: "unknown flag"},
		{name: "unknown command", args: []string{"frobnicate", "--ledger", "LEDGER"}, exit: 2, want: "unknown command"},
		{name: "comment on a number that is not one", exit: 2, want: "invalid number",
			args: []string{"issue", "comment", "forty-two", "--body", "hi", "--repo", owner + "/" + repo, "--task", "BAD-1", "--ledger", "LEDGER"}},
		{name: "exec without a command", exit: 2, want: "",
			args: []string{"exec", "--step", "notify", "--task", "BAD-1", "--ledger", "LEDGER"}},
		{name: "bad --wait", args: prArgs("--wait", "soon"), exit: 2, want: "invalid argument"},
		{name: "GITHUB_API_URL that is not http(s)", args: prArgs(), exit: 2, want: "scheme must be http or https",
			setup: func(b *badRun) error { b.p.env = append(b.p.env, "GITHUB_API_URL=ftp://example.com"); return nil }},
	}
}

// badInput runs every case once.
func (m *matrix) badInput(ctx context.Context) ([]*row, error) {
	w, err := m.newWorld("bad", fixtures.Options{})
	if err != nil {
		return nil, err
	}
	defer w.close()
	w.fake.SetRef(owner, repo, "agent/bad-input", w.fake.AddCommit(owner, repo, "main"))
	var rows []*row
	for i, c := range badCases(m) {
		r, err := w.badCase(ctx, i, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (w *world) badCase(ctx context.Context, i int, c badCase) (*row, error) {
	r := newRow("", c.name, "")
	b := &badRun{w: w, userDir: filepath.Join(w.dir, fmt.Sprintf("user-%02d", i))}
	if err := os.MkdirAll(b.userDir, 0o755); err != nil {
		return nil, err
	}
	b.ledger = filepath.Join(b.userDir, ".ghonce", "ledger.db")
	defer func() {
		for _, d := range b.restore {
			_ = os.Chmod(d, 0o755)
		}
	}()
	if err := os.WriteFile(filepath.Join(b.userDir, "body.md"), []byte("I fixed the bug.\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(b.userDir, "README.md"), []byte("# the user's project\n"), 0o644); err != nil {
		return nil, err
	}
	if c.setup != nil {
		if err := c.setup(b); err != nil {
			return nil, err
		}
	}
	args := c.args
	if len(b.p.args) > 0 {
		args, b.p.args = b.p.args, nil
	}
	if b.skip != "" {
		r.exitText = "—"
		r.note("not run: " + b.skip)
		return r, nil
	}
	for _, a := range args {
		a = strings.ReplaceAll(a, "LEDGER", b.ledger)
		b.p.args = append(b.p.args, strings.ReplaceAll(a, "USER", b.userDir))
	}
	b.p.dir = b.userDir
	_, ledgerBefore := os.Stat(b.ledger)
	before, err := hashTree(b.userDir, b.ledger)
	if err != nil {
		return nil, err
	}
	commits, writes := w.counts()
	reqs := len(w.fake.Requests())
	o, err := w.run(ctx, b.p)
	if err != nil {
		return nil, err
	}
	r.runs = 1
	r.exitText = strconv.Itoa(o.Exit)
	if o.Killed || o.Exit < 0 {
		r.exitText = "killed by a signal"
	}
	r.causes[cause(o.Stderr)]++
	want := c.exit
	if want == -1 {
		// Not fixed by the README: recorded, with a note.
		r.note("exit code not documented for this case")
	} else if o.Exit != want {
		r.errorf("exit %d, want %d: %s", o.Exit, want, firstLine(o.Stderr))
	}
	if c.want != "" && !strings.Contains(o.Stderr, c.want) {
		r.errorf("message %q does not say %q", firstLine(o.Stderr), c.want)
	}
	if strings.TrimSpace(o.Stderr) == "" {
		r.errorf("no message")
	}
	// Requests: none that write; none at all unless the case must ask.
	newReqs := w.fake.Requests()[reqs:]
	nw := 0
	for _, q := range newReqs {
		if q.Method != "GET" && q.Method != "HEAD" {
			nw++
		}
	}
	commits2, writes2 := w.counts()
	nw += (commits2 - commits) + (writes2 - writes)
	r.requests = fmt.Sprintf("%d (%d)", len(newReqs), nw)
	if nw != 0 {
		r.errorf("%d write request(s)", nw)
	}
	if !c.reads && len(newReqs) != 0 {
		r.errorf("%d request(s) to GitHub for input refused locally", len(newReqs))
	}
	after, err := hashTree(b.userDir, b.ledger)
	if err != nil {
		return nil, err
	}
	r.files = "yes"
	if changed := diffTrees(before, after); len(changed) > 0 {
		r.files = "NO: " + strings.Join(changed, ", ")
		r.errorf("user files changed: %s", strings.Join(changed, ", "))
	}
	// A ledger that was not ours must be byte for byte what it was.
	if ledgerBefore == nil && c.exit != 0 {
		if h1, h2 := before[b.ledger], after[b.ledger]; h1 != "" && h1 != h2 {
			r.files = "NO: the ledger file"
			r.errorf("the existing file at the ledger path changed")
		}
	}
	if o.Exit == 2 && !c.ledgerMayExist && ledgerBefore != nil {
		if _, err := os.Stat(b.ledger); err == nil {
			r.errorf("a usage error created the ledger")
		}
	}
	return r, nil
}

// source is the guarded command whose run made realLedger's ledger.
func (b *badRun) source() *trial {
	return &trial{k: kinds["exec"], task: "BAD-source-" + filepath.Base(b.userDir), ledger: ledgerPath(b.w, "bad-source", filepath.Base(b.userDir)+".db")}
}

// sourceArgs reruns source's command on the case's ledger.
func (b *badRun) sourceArgs() []string {
	t := b.source()
	t.ledger = "LEDGER"
	return t.fullArgs(t.k.args(b.w, t, 0))
}

// realLedger returns the bytes of a ledger ghonce has used.
// rootPage is the number of the root page of the table name in the SQLite
// database at path.
func rootPage(path, name string) (int, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var page int
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = ?", name).Scan(&page); err != nil {
		return 0, fmt.Errorf("find the root page of %s in %s: %w", name, path, err)
	}
	return page, nil
}

func (b *badRun) realLedger() ([]byte, error) {
	t := b.source()
	path := t.ledger
	o, err := b.w.run(context.Background(), proc{args: t.fullArgs(t.k.args(b.w, t, 0))})
	if err != nil {
		return nil, err
	}
	if o.Exit != 0 {
		return nil, fmt.Errorf("make a ledger: exit %d: %s", o.Exit, o.Stderr)
	}
	return os.ReadFile(path)
}

// readOnly makes dir unwritable for the ghonce process: by its mode, and,
// when the matrix runs as root (whom modes do not stop), by running ghonce
// as the user nobody.
func (b *badRun) readOnly(dir string) error {
	b.restore = append(b.restore, dir)
	if os.Geteuid() != 0 {
		return os.Chmod(dir, 0o555)
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		b.skip = "running as root and there is no user nobody to run ghonce as"
		return nil
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	b.p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	// nobody may read the ledger (so that it is the directory, not the
	// file, that stops it) and everything on the way to the binary.
	for _, p := range []string{b.ledger, b.ledger + "-wal", b.ledger + "-shm"} {
		if err := os.Chown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		return err
	}
	for d := b.w.dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o005 != 0o005 {
			b.skip = "running as root and " + d + " is not open to the user nobody"
			return nil
		}
	}
	return nil
}

// hashTree returns the SHA-256 of every file under dir (and of extra, if
// it exists outside dir).
func hashTree(dir string, extra string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return hashInto(out, path)
	})
	if err != nil {
		return nil, err
	}
	if _, ok := out[extra]; !ok {
		if _, err := os.Stat(extra); err == nil {
			if err := hashInto(out, extra); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func hashInto(m map[string]string, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	m[path] = hex.EncodeToString(sum[:])
	return nil
}

// diffTrees lists the files that changed or vanished; files ghonce made
// (a new ledger, its WAL) are not the user's and are not listed.
func diffTrees(before, after map[string]string) []string {
	var out []string
	for p, h := range before {
		if after[p] != h {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}
