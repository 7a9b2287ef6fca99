package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

func BenchmarkYRaw(b *testing.B) {
	for _, schema := range []string{"lean", "rowid", "lean-nockpt", "lean-ckpt10k"} {
		b.Run(schema, func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "y.db")
			db, _ := sql.Open("sqlite3", "file:"+path+"?_synchronous=OFF&_journal_mode=WAL")
			defer db.Close()
			db.SetMaxOpenConns(1)
			ddl := `CREATE TABLE e (key TEXT PRIMARY KEY, task TEXT, step TEXT, kind TEXT, repo TEXT, target TEXT, payload BLOB, ph TEXT, status TEXT, outcome TEXT, ref_number INT, ref_url TEXT, owner TEXT, lease INT, fence INT, created INT, updated INT) WITHOUT ROWID;
			CREATE TABLE t (key TEXT, n INT, at INT, owner TEXT, fs TEXT, ts TEXT, fence INT, why TEXT, PRIMARY KEY (key, n)) WITHOUT ROWID;`
			if schema == "rowid" {
				ddl = `CREATE TABLE e (key TEXT PRIMARY KEY, task TEXT, step TEXT, kind TEXT, repo TEXT, target TEXT, payload BLOB, ph TEXT, status TEXT, outcome TEXT, ref_number INT, ref_url TEXT, owner TEXT, lease INT, fence INT, created INT, updated INT);
			CREATE TABLE t (id INTEGER PRIMARY KEY, key TEXT, n INT, at INT, owner TEXT, fs TEXT, ts TEXT, fence INT, why TEXT); CREATE INDEX tk ON t(key, id);`
			}
			if schema == "lean-nockpt" {
				db.Exec("PRAGMA wal_autocheckpoint=0")
			}
			if schema == "lean-ckpt10k" {
				db.Exec("PRAGMA wal_autocheckpoint=10000")
			}
			if _, err := db.Exec(ddl); err != nil {
				b.Fatal(err)
			}
			conn, _ := db.Conn(ctx)
			defer conn.Close()
			run := strconv.FormatInt(time.Now().UnixNano(), 36)
			payload := []byte(`{"title":"Fix the frobnicator","body":"A body of a typical pull request, a few hundred bytes long."}`)
			err := conn.Raw(func(dc any) error {
				c := dc.(*sqlite3.SQLiteConn)
				prep := func(q string) driver.Stmt {
					s, err := c.Prepare(q)
					if err != nil {
						b.Fatal(err)
					}
					return s
				}
				begin, commit := prep("BEGIN IMMEDIATE"), prep("COMMIT")
				ins := prep("INSERT INTO e VALUES (?, 'task', 'step', 'pr', 'octo/repo', 'main', ?, 'hash', 'attempting', '', 0, '', 'bench', ?, 1, ?, ?)")
				sel := prep("SELECT status, fence FROM e WHERE key = ?")
				tr := prep("INSERT INTO t (key, n, at, owner, fs, ts, fence, why) VALUES (?, ?, ?, 'bench', '', 'attempting', 1, 'why')")
				upd := prep("UPDATE e SET status = 'done', outcome = 'created', ref_number = ?, ref_url = ?, owner = '', lease = NULL, updated = ? WHERE key = ? AND fence = 1")
				i := 0
				for b.Loop() {
					i++
					key := benchKey(run, i)
					now := time.Now().UnixNano()
					begin.Exec(nil)
					rows, _ := sel.Query([]driver.Value{key})
					rows.Close()
					if _, err := ins.Exec([]driver.Value{key, payload, now, now, now}); err != nil {
						b.Fatal(err)
					}
					tr.Exec([]driver.Value{key, int64(1), now})
					commit.Exec(nil)
					begin.Exec(nil)
					rows, _ = sel.Query([]driver.Value{key})
					rows.Close()
					upd.Exec([]driver.Value{int64(i), "https://github.com/octo/repo/pull/1", now, key})
					tr.Exec([]driver.Value{key, int64(2), now})
					commit.Exec(nil)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
