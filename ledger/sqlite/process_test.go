//go:build linux

package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// childEnv makes the test binary act as a helper process of the tests below
// instead of running tests: TestMain hands it to runChild.
const childEnv = "GHONCE_SQLITE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

func runChild(mode string) int {
	switch mode {
	case "claim":
		return childClaim()
	case "diskfull":
		return childDiskFull()
	}
	fmt.Printf("error unknown child mode %q\n", mode)
	return 2
}

// startChild re-executes the test binary as a helper in mode, with env added.
func startChild(t *testing.T, mode string, env ...string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	// -test.run=^$ runs no test should TestMain ever not divert the child.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A child still running here was abandoned by a failed test.
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdin, bufio.NewScanner(stdout), stderr
}

const (
	claimProcs = 16
	claimKeys  = 20
)

// childClaim opens the ledger, says "ready", waits for a line on stdin, then
// claims keys key-00, key-01, ... in order, finishing as done each one it
// created, and prints a line per claim.
func childClaim() int {
	ctx := context.Background()
	id := os.Getenv("GHONCE_TEST_ID")
	l, err := Open(ctx, os.Getenv("GHONCE_TEST_LEDGER"), Options{})
	if err != nil {
		fmt.Printf("error open: %v\n", err)
		return 1
	}
	defer l.Close()
	fmt.Printf("ready created=%v\n", l.Created())
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Printf("error waiting for go: %v\n", err)
		return 1
	}
	for i := range claimKeys {
		key := fmt.Sprintf("key-%02d", i)
		c, err := l.Claim(ctx, ledger.ClaimParams{
			Key: key, Task: "t", Step: "s", Kind: "pr", Repo: "o/r",
			Payload: []byte(`{"by":"` + id + `"}`), PayloadHash: "h",
			Owner: ledger.Owner{ID: "proc-" + id, Host: "test", PID: os.Getpid()},
			Lease: time.Hour, Why: "claim by " + id,
		})
		if err != nil {
			fmt.Printf("error claim %s: %v\n", key, err)
			return 1
		}
		fmt.Printf("claim %s %s\n", key, c.State)
		if c.State == ledger.ClaimCreated {
			_, err := l.Finish(ctx, ledger.FinishParams{Key: key, Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Text: id}, Why: "done by " + id})
			if err != nil {
				fmt.Printf("error finish %s: %v\n", key, err)
				return 1
			}
		}
	}
	fmt.Println("end")
	return 0
}

// TestMultiProcessClaim runs claimProcs processes against one ledger that
// none of them has yet: they race to create it, then, released together,
// claim the same keys in the same order. Every key must be created by
// exactly one process, and no process may see "database is locked".
func TestMultiProcessClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "ledger.db")
	type child struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		out    *bufio.Scanner
		stderr *bytes.Buffer
	}
	var children []child
	for i := range claimProcs {
		cmd, stdin, out, stderr := startChild(t, "claim", "GHONCE_TEST_LEDGER="+path, "GHONCE_TEST_ID="+strconv.Itoa(i))
		children = append(children, child{cmd, stdin, out, stderr})
	}
	created := 0
	for i, c := range children {
		if !c.out.Scan() {
			c.cmd.Wait()
			t.Fatalf("child %d said nothing; stderr:\n%s", i, c.stderr)
		}
		switch line := c.out.Text(); line {
		case "ready created=true":
			created++
		case "ready created=false":
		default:
			t.Fatalf("child %d: %s", i, line)
		}
	}
	if created != 1 {
		t.Errorf("%d processes created the ledger, want 1", created)
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
	}
	states := map[string]map[string]int{} // key -> state -> count
	for i, c := range children {
		var lines []string
		for c.out.Scan() {
			lines = append(lines, c.out.Text())
		}
		err := c.cmd.Wait()
		all := strings.Join(lines, "\n") + c.stderr.String()
		if strings.Contains(all, "locked") {
			t.Errorf("child %d saw a lock error:\n%s", i, all)
		}
		if err != nil || len(lines) == 0 || lines[len(lines)-1] != "end" {
			t.Fatalf("child %d: %v\n%s", i, err, all)
		}
		for _, line := range lines[:len(lines)-1] {
			var key, state string
			if _, err := fmt.Sscanf(line, "claim %s %s", &key, &state); err != nil {
				t.Fatalf("child %d: unexpected line %q", i, line)
			}
			if states[key] == nil {
				states[key] = map[string]int{}
			}
			states[key][state]++
		}
	}
	if len(states) != claimKeys {
		t.Errorf("claims reported for %d keys, want %d", len(states), claimKeys)
	}
	for key, s := range states {
		if s["created"] != 1 || s["acquired"] != 0 || s["created"]+s["busy"]+s["done"] != claimProcs {
			t.Errorf("%s: %v; want 1 created and the rest busy or done", key, s)
		}
	}

	l := open(t, path, Options{ReadOnly: true})
	for i := range claimKeys {
		key := fmt.Sprintf("key-%02d", i)
		e, err := l.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		h, err := l.History(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != ledger.Done || e.Fence != 1 || e.Attempts != 1 || len(h) != 2 {
			t.Errorf("%s: status %s, fence %d, attempts %d, %d transitions; want done, 1, 1, 2", key, e.Status, e.Fence, e.Attempts, len(h))
		}
	}
}

// childDiskFull runs a ledger into RLIMIT_FSIZE, the file size limit, which
// fails writes as a full disk does, and prints what it saw: "ok ..." lines
// for what went as it must, "fail ..." lines otherwise.
func childDiskFull() int {
	ctx := context.Background()
	path := filepath.Join(os.Getenv("GHONCE_TEST_DIR"), "ledger.db")
	// Past the limit, write fails with EFBIG instead of the process being
	// killed by SIGXFSZ.
	signal.Ignore(syscall.SIGXFSZ)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Printf("fail getrlimit: %v\n", err)
		return 1
	}
	setLimit := func(cur uint64) bool {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: min(cur, lim.Max), Max: lim.Max}); err != nil {
			fmt.Printf("fail setrlimit: %v\n", err)
			return false
		}
		return true
	}
	failed := false
	fail := func(format string, args ...any) { fmt.Printf("fail "+format+"\n", args...); failed = true }

	// No room for the schema: Open fails, naming the file.
	if !setLimit(1024) {
		return 1
	}
	if l, err := Open(ctx, path, Options{}); err == nil {
		l.Close()
		fail("open with no room succeeded")
	} else {
		fmt.Printf("ok open with no room: %v\n", err)
	}
	if !setLimit(lim.Cur) {
		return 1
	}
	// With room again, the ledger is made in the file left behind.
	l, err := Open(ctx, path, Options{})
	if err != nil {
		fail("open with room: %v", err)
		return 1
	}
	if !l.Created() {
		fail("open with room: Created() = false")
	}

	// Claim big payloads until the limit is hit.
	if !setLimit(512 << 10) {
		return 1
	}
	payload := bytes.Repeat([]byte("x"), 64<<10)
	claim := func(key string) error {
		_, err := l.Claim(ctx, ledger.ClaimParams{Key: key, Kind: "pr", Payload: payload, Owner: ledger.Owner{ID: "me"}, Lease: time.Hour, Why: "fill"})
		return err
	}
	var stored []string
	var full string
	for i := range 100 {
		key := fmt.Sprintf("key-%02d", i)
		if err := claim(key); err != nil {
			fmt.Printf("ok claim with no room: %v\n", err)
			full = key
			break
		}
		stored = append(stored, key)
	}
	if full == "" {
		fail("100 claims of 64 KiB fit under a 512 KiB limit")
		return 1
	}
	if !setLimit(lim.Cur) {
		return 1
	}
	// Every acknowledged claim is there, the refused one is not, and the
	// ledger goes on working: on this handle, and reopened.
	check := func(l *Ledger, when string) {
		for _, key := range stored {
			if _, err := l.Get(ctx, key); err != nil {
				fail("%s: acknowledged %s: %v", when, key, err)
			}
		}
	}
	check(l, "same handle")
	if _, err := l.Get(ctx, full); !errors.Is(err, ledger.ErrNotFound) {
		fail("refused claim %s: Get = %v, want ErrNotFound", full, err)
	}
	if err := claim(full); err != nil {
		fail("claim with room again: %v", err)
	}
	stored = append(stored, full)
	if err := l.Close(); err != nil {
		fail("close: %v", err)
	}
	l, err = Open(ctx, path, Options{})
	if err != nil {
		fail("reopen: %v", err)
		return 1
	}
	defer l.Close()
	check(l, "reopened")
	fmt.Printf("ok %d claims kept\n", len(stored))
	if failed {
		return 1
	}
	return 0
}

// TestDiskFull: a ledger that runs out of space fails the write at hand with
// an error naming the file, loses nothing it acknowledged, and works again
// once there is room.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin, out, stderr := startChild(t, "diskfull", "GHONCE_TEST_DIR="+dir)
	stdin.Close()
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	err := cmd.Wait()
	all := strings.Join(lines, "\n")
	t.Logf("child:\n%s", all)
	if err != nil || strings.Contains(all, "fail ") || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("child: %v\n%s\nstderr:\n%s", err, all, stderr)
	}
	path := filepath.Join(dir, "ledger.db")
	for _, want := range []string{"ok open with no room: ", "ok claim with no room: "} {
		found := false
		for _, line := range lines {
			if strings.HasPrefix(line, want) {
				found = true
				if !strings.Contains(line, path) {
					t.Errorf("error does not name the ledger: %s", line)
				}
			}
		}
		if !found {
			t.Errorf("no line %q", want)
		}
	}
}
