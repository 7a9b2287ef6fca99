//go:build unix

package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
)

func open(t testing.TB, path string, opts Options) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func claimParams(key, who string) ledger.ClaimParams {
	return ledger.ClaimParams{
		Key: key, Task: "t", Step: "s", Kind: "pr", Repo: "o/r", Target: "main",
		Payload: []byte(`{"n":1}`), PayloadHash: "h",
		Owner: ledger.Owner{ID: who, Host: "host", PID: 1},
		Lease: time.Hour, Why: "test",
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestFileModes(t *testing.T) {
	// With no umask, only Open decides the modes.
	root := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	rootMode := mode(t, root)
	path := filepath.Join(root, "state", "ghonce", "ledger.db")
	l := open(t, path, Options{})
	if _, err := l.Claim(context.Background(), claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "state"), filepath.Join(root, "state", "ghonce")} {
		if m := mode(t, dir); m != 0o700 {
			t.Errorf("%s has mode %v, want 0700", dir, m)
		}
	}
	if m := mode(t, root); m != rootMode {
		t.Errorf("existing directory %s changed mode from %v to %v", root, rootMode, m)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("ledger has mode %v, want 0600", m)
	}
	// While the ledger is open, SQLite keeps -wal and -shm beside it, with
	// the ledger's own mode.
	for _, suffix := range []string{"-wal", "-shm"} {
		if m := mode(t, path+suffix); m != 0o600 {
			t.Errorf("%s has mode %v, want 0600", suffix, m)
		}
	}
}

func TestFileModesWithUmask(t *testing.T) {
	// A umask that would strip the owner's own bits does not leave the
	// ledger unusable.
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	l := open(t, path, Options{})
	if _, err := l.Claim(context.Background(), claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Dir(path)); m != 0o700 {
		t.Errorf("directory has mode %v, want 0700", m)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("ledger has mode %v, want 0600", m)
	}
}

func TestExistingFileModeKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	open(t, path, Options{})
	if m := mode(t, path); m != 0o640 {
		t.Errorf("Open changed the mode of an existing file to %v", m)
	}
}

// TestPragmas reads back, on connections of the pool, what Open promises.
func TestPragmas(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	ctx := context.Background()
	// Hold two connections at once so the pool has opened more than the
	// one setUp used.
	c1, err := l.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := l.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for i, c := range []*sql.Conn{c1, c2} {
		for _, p := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"synchronous", "2"},
			{"busy_timeout", "10000"},
			{"foreign_keys", "1"},
			{"application_id", fmt.Sprint(ApplicationID)},
			{"user_version", fmt.Sprint(SchemaVersion)},
		} {
			t.Run(fmt.Sprintf("conn %d %s", i, p.pragma), func(t *testing.T) {
				var got string
				if err := c.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
					t.Fatalf("conn %d: PRAGMA %s: %v", i, p.pragma, err)
				}
				if got != p.want {
					t.Errorf("conn %d: PRAGMA %s = %s, want %s", i, p.pragma, got, p.want)
				}
			})
		}
	}
}

func TestMigrations(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != SchemaVersion || ms[len(ms)-1].Version != SchemaVersion {
		t.Fatalf("migrations = %d, last version %d; want %d", len(ms), ms[len(ms)-1].Version, SchemaVersion)
	}
}

func TestTransitionsAppendOnly(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	ctx := context.Background()
	if _, err := l.Claim(ctx, claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"UPDATE transitions SET why = 'x'", "DELETE FROM transitions"} {
		if _, err := l.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want append-only refusal", q, err)
		}
	}
}

func hashFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// rawDB opens path with the driver's defaults (rollback journal), as another
// program would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// makeLedger makes a ledger at path holding one done entry, and closes it.
func makeLedger(t *testing.T, path string) {
	t.Helper()
	l, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := l.Claim(context.Background(), claimParams("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(context.Background(), ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Why: "ok"}); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefuse opens files that are not ghonce ledgers, read-write and
// read-only, and checks that each is refused with an error that names it and
// says what to do, and that neither the file nor its directory changed.
func TestRefuse(t *testing.T) {
	cases := []struct {
		name    string
		make    func(t *testing.T, path string)
		want    error
		wantMsg string
	}{
		{
			name: "random bytes",
			make: func(t *testing.T, path string) {
				os.WriteFile(path, randomBytes(t, 8192), 0o600)
			},
			want: ledger.ErrNotLedger, wantMsg: "not an SQLite database",
		},
		{
			name: "text file",
			make: func(t *testing.T, path string) {
				os.WriteFile(path, []byte("my notes\n"), 0o600)
			},
			want: ledger.ErrNotLedger, wantMsg: "too short",
		},
		{
			name: "SQLite magic then garbage",
			make: func(t *testing.T, path string) {
				os.WriteFile(path, append([]byte(sqliteMagic), randomBytes(t, 4096-len(sqliteMagic))...), 0o600)
			},
			want: ledger.ErrNotLedger,
		},
		{
			name: "another program's database",
			make: func(t *testing.T, path string) {
				rawExec(t, path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes (body) VALUES ('keep me')")
			},
			want: ledger.ErrNotLedger, wantMsg: "another program's SQLite database",
		},
		{
			name: "another program's WAL database",
			make: func(t *testing.T, path string) {
				rawExec(t, path, "PRAGMA journal_mode = WAL", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes (body) VALUES ('keep me')")
			},
			want: ledger.ErrNotLedger, wantMsg: "another program's SQLite database",
		},
		{
			name: "another program's empty database with its application_id",
			make: func(t *testing.T, path string) {
				rawExec(t, path, "PRAGMA application_id = 252006674", "VACUUM")
			},
			want: ledger.ErrNotLedger, wantMsg: "application_id 0xf055112",
		},
		{
			name: "empty database with tables but user_version",
			make: func(t *testing.T, path string) {
				rawExec(t, path, "PRAGMA user_version = 7", "VACUUM")
			},
			want: ledger.ErrNotLedger, wantMsg: "another program's",
		},
		{
			name: "ledger with a damaged first page",
			make: func(t *testing.T, path string) {
				makeLedger(t, path)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				copy(b[100:4096], randomBytes(t, 4096-100))
				os.WriteFile(path, b, 0o600)
			},
			want: ledger.ErrNotLedger, wantMsg: "damaged",
		},
		{
			name: "truncated ledger",
			make: func(t *testing.T, path string) {
				makeLedger(t, path)
				os.Truncate(path, 4096+1000)
			},
			want: ledger.ErrNotLedger, wantMsg: "truncated",
		},
		{
			name: "ledger from a newer ghonce",
			make: func(t *testing.T, path string) {
				makeLedger(t, path)
				rawExec(t, path, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1))
			},
			want: ledger.ErrNewerSchema, wantMsg: "upgrade ghonce",
		},
	}
	for _, tc := range cases {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tc.name, ro), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "ledger.db")
				tc.make(t, path)
				before, files := hashFile(t, path), listDir(t, dir)
				l, err := Open(context.Background(), path, Options{ReadOnly: ro})
				if err == nil {
					l.Close()
					t.Fatal("Open succeeded")
				}
				t.Logf("refused: %v", err)
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
				for _, s := range []string{path, "choose another location", tc.wantMsg} {
					if tc.want == ledger.ErrNewerSchema && s == "choose another location" {
						continue
					}
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "--") {
					t.Errorf("error %q names a flag: a library caller has none (the CLI adds its own hint)", err)
				}
				if after := hashFile(t, path); after != before {
					t.Error("the refused file changed")
				}
				after := listDir(t, dir)
				if ro && !slices.Equal(after, files) {
					// A read-only connection cannot remove the -wal and
					// -shm files SQLite made for it; they must hold nothing.
					after = slices.DeleteFunc(after, func(name string) bool {
						return name == "ledger.db-shm" || name == "ledger.db-wal" && fileSize(t, path+"-wal") == 0
					})
				}
				if !slices.Equal(after, files) {
					t.Errorf("directory holds %v after the refusal, %v before", after, files)
				}
			})
		}
	}
}

func TestRefuseDirectory(t *testing.T) {
	for _, ro := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "ledger.db")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), path, Options{ReadOnly: ro})
		if !errors.Is(err, ledger.ErrNotLedger) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "directory") {
			t.Errorf("readonly=%v: err = %v, want ErrNotLedger naming %s as a directory", ro, err, path)
		}
		if files := listDir(t, path); len(files) != 0 {
			t.Errorf("readonly=%v: directory now holds %v", ro, files)
		}
	}
}

func TestRefuseUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	makeLedger(t, path)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, Options{})
	t.Logf("refused: %v", err)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want a permission error naming %s", err, path)
	}
}

func TestReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes directories whatever their mode")
	}
	dir := t.TempDir()
	existing := filepath.Join(t.TempDir(), "ledger.db")
	makeLedger(t, existing)
	for _, d := range []string{dir, filepath.Dir(existing)} {
		if err := os.Chmod(d, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(d, 0o700)
	}
	for _, path := range []string{filepath.Join(dir, "ledger.db"), filepath.Join(dir, "sub", "ledger.db"), existing} {
		_, err := Open(context.Background(), path, Options{})
		t.Logf("refused: %v", err)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%s) err = %v, want an error naming it", path, err)
		}
	}
}

func TestParentIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := hashFile(t, file)
	for _, path := range []string{filepath.Join(file, "ledger.db"), filepath.Join(file, "a", "ledger.db")} {
		_, err := Open(context.Background(), path, Options{})
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "choose another location") {
			t.Errorf("Open(%s) err = %v, want an error naming it with a hint", path, err)
		}
	}
	if hashFile(t, file) != before {
		t.Error("the file in the way changed")
	}
}

func TestEmptyPath(t *testing.T) {
	if _, err := Open(context.Background(), "", Options{}); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

func TestCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path, Options{})
	if !l.Created() {
		t.Error("first Open: Created() = false")
	}
	if l.Path() != path {
		t.Errorf("Path() = %q, want %q", l.Path(), path)
	}
	l.Close()
	l = open(t, path, Options{})
	if l.Created() {
		t.Error("second Open: Created() = true")
	}

	// An empty file, as left by a crash before the schema was written, is a
	// new ledger.
	empty := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if l := open(t, empty, Options{}); !l.Created() {
		t.Error("Open of an empty file: Created() = false")
	}
}

func TestRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	l := open(t, "ledger.db", Options{})
	if want := filepath.Join(dir, "ledger.db"); l.Path() != want {
		t.Errorf("Path() = %q, want %q", l.Path(), want)
	}
}

func TestPathWithURICharacters(t *testing.T) {
	// The path goes into a file: URI; characters that mean something there
	// must not change which file is opened.
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars&mode=ro")
	path := filepath.Join(dir, "ledger.db")
	l := open(t, path, Options{})
	if _, err := l.Claim(context.Background(), claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	if files := listDir(t, dir); !slices.Contains(files, "ledger.db") || len(files) != 3 {
		t.Errorf("directory holds %v, want ledger.db and its -wal and -shm", files)
	}
}

// TestConcurrentOpen has goroutines open one new path at once: all succeed
// and exactly one of them made the ledger.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "ledger.db")
	const n = 16
	created := ledgertest.ConcurrentOpens(t, n, func() (*Ledger, error) {
		return Open(context.Background(), path, Options{})
	})
	if created != 1 {
		t.Errorf("%d of %d Opens created the ledger, want 1", created, n)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	ctx := context.Background()
	clock := ledgertest.NewClock(time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC))
	l := open(t, path, Options{Now: clock.Now})
	c, err := l.Claim(ctx, claimParams("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	done, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 3, URL: "u"}, Why: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(ctx, claimParams("open", "a")); err != nil {
		t.Fatal(err)
	}
	hist, err := l.History(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The last close folds the WAL into the file.
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there after Close: %v", suffix, err)
		}
	}

	for _, ro := range []bool{false, true} {
		l := open(t, path, Options{Now: clock.Now, ReadOnly: ro})
		if l.Created() {
			t.Errorf("readonly=%v: reopen says Created", ro)
		}
		got, err := l.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != ledger.Done || got.Ref != done.Ref || !got.UpdatedAt.Equal(done.UpdatedAt) || !got.CreatedAt.Equal(c.Entry.CreatedAt) {
			t.Errorf("readonly=%v: reopened entry %+v, want %+v", ro, got, done)
		}
		h, err := l.History(ctx, "k")
		if err != nil || len(h) != len(hist) {
			t.Errorf("readonly=%v: history %v, %v; want %d transitions", ro, h, err, len(hist))
		}
		if es, err := l.List(ctx, ledger.ListParams{}); err != nil || len(es) != 2 {
			t.Errorf("readonly=%v: List = %d entries, %v; want 2", ro, len(es), err)
		}
		if ro {
			_, err := l.Claim(ctx, claimParams("new", "b"))
			if err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("Claim on a read-only ledger: err = %v", err)
			}
			if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: "open", Status: ledger.Failed, Who: "me"}); err == nil {
				t.Error("Resolve on a read-only ledger succeeded")
			}
		}
		l.Close()
	}
}

func TestReadOnlyMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "ledger.db")
	_, err := Open(context.Background(), path, Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want ErrNotExist naming %s", err, path)
	}
	if files := listDir(t, dir); len(files) != 0 {
		t.Errorf("read-only Open created %v", files)
	}
	// An empty file is no ledger yet either.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), empty, Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open of an empty file: err = %v, want ErrNotExist", err)
	}
	if hashFile(t, empty) != hashFile(t, empty) || mode(t, empty) != 0o600 {
		t.Error("empty file changed")
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Error("read-only Open wrote to an empty file")
	}
}

// TestEmptyDatabaseInitialised: an SQLite database with no tables, no
// application_id and no user_version holds nothing to lose; it is taken.
func TestEmptyDatabaseInitialised(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	rawExec(t, path, "VACUUM")
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("setup made no page: %v", err)
	}
	l := open(t, path, Options{})
	if !l.Created() {
		t.Error("Created() = false")
	}
}

func TestCheck(t *testing.T) {
	l := &Ledger{path: "/x/ledger.db"}
	for _, tt := range []struct {
		id   identity
		want error
	}{
		{identity{}, nil},
		{identity{appID: ApplicationID, version: 1, objects: 9}, nil},
		{identity{appID: ApplicationID, version: SchemaVersion + 1, objects: 9}, ledger.ErrNewerSchema},
		{identity{appID: ApplicationID, version: 0, objects: 0}, ledger.ErrNotLedger},
		{identity{appID: 0, version: 0, objects: 1}, ledger.ErrNotLedger},
		{identity{appID: 0, version: 3, objects: 0}, ledger.ErrNotLedger},
		{identity{appID: 12, version: 0, objects: 0}, ledger.ErrNotLedger},
	} {
		t.Run(fmt.Sprintf("%+v", tt.id), func(t *testing.T) {
			err := l.check(tt.id)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("check(%+v) = %v, want %v", tt.id, err, tt.want)
			}
		})
	}
}

func TestTimesUTC(t *testing.T) {
	loc := time.FixedZone("UTC+5", 5*3600)
	now := time.Date(2030, 1, 1, 12, 0, 0, 987654321, loc)
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	c, err := l.Claim(ctx, claimParams("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.History(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	for name, tm := range map[string]time.Time{
		"claim CreatedAt": c.Entry.CreatedAt, "CreatedAt": e.CreatedAt, "UpdatedAt": e.UpdatedAt,
		"LeaseUntil": e.LeaseUntil, "transition At": h[0].At,
	} {
		if tm.Location() != time.UTC {
			t.Errorf("%s in %v, want UTC", name, tm.Location())
		}
	}
	if !e.CreatedAt.Equal(now) || !e.LeaseUntil.Equal(now.Add(time.Hour)) {
		t.Errorf("times %v, %v; want %v and an hour later, to the nanosecond", e.CreatedAt, e.LeaseUntil, now)
	}
}

func TestBadInput(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	ctx := context.Background()
	noKey := claimParams("", "a")
	noOwner := claimParams("k", "")
	noLease := claimParams("k", "a")
	noLease.Lease = 0
	for name, p := range map[string]ledger.ClaimParams{"no key": noKey, "no owner": noOwner, "no lease": noLease} {
		if _, err := l.Claim(ctx, p); err == nil {
			t.Errorf("Claim with %s succeeded", name)
		}
	}
	huge := claimParams("huge", "a")
	huge.Lease = time.Duration(1<<63 - 1)
	if _, err := l.Claim(ctx, huge); err == nil || !strings.Contains(err.Error(), "not between 0 and 1h0m0s") {
		t.Errorf("Claim with a lease over ledger.MaxLease: %v; want it refused", err)
	}
	longest := claimParams("longest", "a")
	longest.Lease = ledger.MaxLease
	c, err := l.Claim(ctx, longest)
	if err != nil || !c.Entry.LeaseLive(c.Now.Add(ledger.MaxLease-time.Second)) {
		t.Fatalf("Claim with the longest lease: %+v, %v", c, err)
	}
	if _, err := l.Claim(ctx, claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: "bogus"}); err == nil {
		t.Error("Finish to status bogus succeeded")
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Fence: 1, Status: ledger.Done}); err == nil {
		t.Error("Finish with no key succeeded")
	}
	if err := l.Renew(ctx, "k", 1, -time.Second); err == nil {
		t.Error("Renew with a negative lease succeeded")
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: "k", Status: ledger.Attempting, Who: "me"}); err == nil {
		t.Error("Resolve to attempting succeeded")
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: "k", Status: ledger.Done}); err == nil {
		t.Error("Resolve by nobody succeeded")
	}
	e, err := l.Get(ctx, "k")
	if err != nil || e.Status != ledger.Attempting || e.Fence != 1 {
		t.Errorf("after refused calls: %+v, %v", e, err)
	}
}

func TestCanceledContext(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Claim(ctx, claimParams("k", "a")); err == nil {
		t.Error("Claim with a canceled context succeeded")
	}
	if _, err := l.Get(context.Background(), "k"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get after canceled Claim: %v, want ErrNotFound", err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{}); err == nil {
		t.Error("Open with a canceled context succeeded")
	}
}

// TestRefuseThroughWAL covers files whose telling content is still only in
// the WAL, because another process holds them open: the header alone says
// nothing, so SQLite has to look.
func TestRefuseThroughWAL(t *testing.T) {
	t.Run("another program's database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		other := rawDB(t, path)
		defer other.Close()
		other.SetMaxOpenConns(1)
		for _, s := range []string{"PRAGMA journal_mode = WAL", "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')"} {
			if _, err := other.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		before := hashFile(t, path)
		_, err := Open(context.Background(), path, Options{})
		t.Logf("refused: %v", err)
		if !errors.Is(err, ledger.ErrNotLedger) || !strings.Contains(err.Error(), "another program's") || !strings.Contains(err.Error(), path) {
			t.Errorf("err = %v, want ErrNotLedger naming %s as another program's", err, path)
		}
		if hashFile(t, path) != before {
			t.Error("the refused file changed")
		}
		var body string
		if err := other.QueryRow("SELECT body FROM notes").Scan(&body); err != nil || body != "keep me" {
			t.Errorf("the other program reads %q, %v", body, err)
		}
	})
	t.Run("ledger from a newer ghonce", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		holder := open(t, path, Options{})
		if _, err := holder.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), path, Options{})
		t.Logf("refused: %v", err)
		if !errors.Is(err, ledger.ErrNewerSchema) || !strings.Contains(err.Error(), path) {
			t.Errorf("err = %v, want ErrNewerSchema naming %s", err, path)
		}
		var v int
		if err := holder.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion+1 {
			t.Errorf("user_version now %d, %v", v, err)
		}
	})
}

// TestJournalModeReadBack: Open reads the journal mode back. A read-only Open
// cannot switch a ledger to WAL and refuses one that is not; a read-write
// Open switches it back.
func TestJournalModeReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	makeLedger(t, path)
	rawExec(t, path, "PRAGMA journal_mode = DELETE")
	before := hashFile(t, path)
	_, err := Open(context.Background(), path, Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), `journal mode is "delete"`) || !strings.Contains(err.Error(), path) {
		t.Errorf("read-only Open of a rollback-journal ledger: err = %v", err)
	}
	if hashFile(t, path) != before {
		t.Error("read-only Open changed the file")
	}
	l := open(t, path, Options{})
	var mode string
	if err := l.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode after read-write Open = %q, %v; want wal", mode, err)
	}
	if _, err := l.Get(context.Background(), "k"); err != nil {
		t.Error(err)
	}
}

// TestReclaimByHolder pins this backend's answer where the contract names
// none: the holder of a live lease claiming again is told busy, and nothing
// is written, so a confused caller waits rather than acts twice.
func TestReclaimByHolder(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	ctx := context.Background()
	if _, err := l.Claim(ctx, claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	c, err := l.Claim(ctx, claimParams("k", "a"))
	if err != nil || c.State != ledger.ClaimBusy || c.Entry.Fence != 1 {
		t.Fatalf("re-claim by the holder = %+v, %v; want busy at fence 1", c, err)
	}
	if h, err := l.History(ctx, "k"); err != nil || len(h) != 1 {
		t.Errorf("history = %v, %v; want one transition", h, err)
	}
}

// A ledger written by a ghonce that knew only schema version 1 opens,
// migrates to the current version and keeps its entries.
func TestOpenMigratesAVersion1Ledger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, "PRAGMA journal_mode = WAL", ms[0].SQL,
		`INSERT INTO entries (key, task, step, kind, repo, target, payload, payload_hash, status, fence, attempts, created_at, updated_at)
		 VALUES ('gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'T', 's', 'pr', 'o/r', 'main', X'7B7D', 'h', 'done', 1, 1, 1, 1)`,
		fmt.Sprintf("PRAGMA application_id = %d", ApplicationID), "PRAGMA user_version = 1")
	l := open(t, path, Options{})
	if l.Created() {
		t.Error("Created() = true for an existing version 1 ledger")
	}
	e, err := l.Get(context.Background(), "gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	if err != nil || e.Status != ledger.Done {
		t.Fatalf("entry after migration: %+v, %v", e, err)
	}
	if _, err := l.PutMeta(context.Background(), "origin", "action", true); err != nil {
		t.Fatalf("PutMeta after migration: %v", err)
	}
	var v int
	if err := l.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
}

// A ledger at schema version 2 (rowid tables, transitions ordered by id)
// migrates to the current version with every entry and every history in
// its order, and a write after the migration numbers its transition after
// the migrated ones.
func TestOpenMigratesAVersion2Ledger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"PRAGMA journal_mode = WAL", ms[0].SQL, ms[1].SQL}
	for _, k := range []string{"gk1_a", "gk1_b"} {
		stmts = append(stmts, `INSERT INTO entries (key, task, step, kind, repo, target, payload, payload_hash, status, owner_id, lease_until, fence, attempts, created_at, updated_at)
			VALUES ('`+k+`', 'T', 's', 'pr', 'o/r', 'main', X'7B7D', 'h', 'attempting', 'dead', 1, 2, 2, 1, 1)`)
	}
	// The two histories interleave in id order, as concurrent runs leave them.
	for i, tr := range []struct{ key, from, to, why string }{
		{"gk1_a", "", "attempting", "a1"}, {"gk1_b", "", "attempting", "b1"},
		{"gk1_a", "attempting", "failed", "a2"}, {"gk1_b", "attempting", "failed", "b2"},
		{"gk1_a", "failed", "attempting", "a3"}, {"gk1_b", "failed", "attempting", "b3"},
	} {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO transitions (key, at, owner, from_status, to_status, fence, why)
			VALUES ('%s', %d, 'dead', '%s', '%s', 1, '%s')`, tr.key, 10+i, tr.from, tr.to, tr.why))
	}
	stmts = append(stmts, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID), "PRAGMA user_version = 2")
	rawExec(t, path, stmts...)

	l := open(t, path, Options{})
	for _, k := range []string{"gk1_a", "gk1_b"} {
		h, err := l.History(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var whys []string
		for _, tr := range h {
			whys = append(whys, tr.Why)
		}
		p := k[len(k)-1:]
		if want := []string{p + "1", p + "2", p + "3"}; !slices.Equal(whys, want) {
			t.Errorf("history of %s after migration = %v, want %v", k, whys, want)
		}
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: "gk1_a", Fence: 2, Status: ledger.Done, Why: "a4"}); err != nil {
		t.Fatalf("finish after migration: %v", err)
	}
	h, err := l.History(ctx, "gk1_a")
	if err != nil || len(h) != 4 || h[3].Why != "a4" || h[3].To != ledger.Done {
		t.Fatalf("history after a write = %+v, %v; want a fourth transition to done", h, err)
	}
	var v int
	if err := l.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
}

// The listings the commands make on a large ledger read an index, not the
// whole table: the default listing, a task's entries, a repository's
// entries (status --repo, labels prune), and the entries that are not done
// (reconcile, status --stale), filtered by repository too.
func TestListingsUseAnIndex(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	for _, c := range []struct {
		name string
		p    ledger.ListParams
		want string
	}{
		{"default", ledger.ListParams{Limit: 50}, "entries_by_created"},
		{"task", ledger.ListParams{Task: "t"}, "entries_by_task"},
		{"not done", ledger.ListParams{Status: ledger.Attempting}, "entries_not_done"},
		{"not done in a repository", ledger.ListParams{Status: ledger.Attempting, Repo: "o/r"}, "entries_not_done"},
		{"stale", ledger.ListParams{Status: ledger.Attempting, UpdatedBefore: time.Now()}, "entries_not_done"},
		{"repository", ledger.ListParams{Repo: "o/r"}, "entries_by_repo"},
		{"labels prune", ledger.ListParams{Repo: "o/r", Status: ledger.Done, UpdatedBefore: time.Now()}, "entries_by_repo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, args := listQuery(c.p)
			rows, err := l.db.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX "+c.want) && !strings.Contains(got, "USING COVERING INDEX "+c.want) {
				t.Errorf("List(%+v) plan = %q, want it to use %s", c.p, got, c.want)
			}
		})
	}
}

// A ghonce of schema 2 that still had the ledger open when a newer one
// migrated it writes history rows the old way; the write fails with a
// message that says what happened and what to do, and changes nothing.
func TestOldWriterAfterMigrationIsToldToUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path, Options{})
	if _, err := l.Claim(context.Background(), claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	// The statement schema 2's Finish ran after its UPDATE.
	_, err := db.Exec(`INSERT INTO transitions (key, at, owner, from_status, to_status, fence, why)
		VALUES ('k', 1, 'a', 'attempting', 'done', 1, 'created')`)
	if err == nil || !strings.Contains(err.Error(), "upgrade ghonce") {
		t.Fatalf("old-style insert: %v; want an error that says to upgrade ghonce", err)
	}
	if h, err := l.History(context.Background(), "k"); err != nil || len(h) != 1 {
		t.Fatalf("history = %v, %v; want the claim's one transition", h, err)
	}
}

// Two processes that open one ledger through two hard links would each
// get their own -wal, and act twice: a ledger file with more than one
// link is refused, with words that say why and what to do.
func TestOpenRefusesAHardLinkedLedger(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	l, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	other := filepath.Join(dir, "other.db")
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, other} {
		_, err := Open(context.Background(), p, Options{})
		if err == nil || !strings.Contains(err.Error(), "2 hard links") || !strings.Contains(err.Error(), "same path") {
			t.Errorf("Open(%s) with two hard links: err = %v; want a refusal naming the links and the fix", p, err)
		}
	}
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	l, err = Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("Open after the other link is removed: %v", err)
	}
	l.Close()
}
