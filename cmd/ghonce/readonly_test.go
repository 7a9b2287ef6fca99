package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// status on a ledger this user may read but not write. Another user's view
// needs a second identity: as root the run drops to nobody with setpriv;
// otherwise file modes do it.
func TestStatusOnAReadOnlyLedger(t *testing.T) {
	t.Parallel()
	// In a directory this user cannot write either: exit 1 with words about
	// permissions (not "no such file"), and nothing changed.
	t.Run("directory not writable", func(t *testing.T) {
		t.Parallel()
		dir, led := readOnlyLedger(t, 0o555)
		out, err := statusAsAnotherUser(t, dir, led)
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != 1 || !strings.Contains(out, "this user can write neither the ledger nor its directory") || strings.Contains(out, "no such file") {
			t.Errorf("status on a read-only ledger: %v: %s; want exit 1 saying this user cannot write it", err, out)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("the read-only directory holds %d files, want the ledger alone", len(entries))
		}
	})
	// The file alone read-only: status opens it read-only and lists it.
	t.Run("file read-only", func(t *testing.T) {
		t.Parallel()
		dir, led := readOnlyLedger(t, 0o777)
		out, err := statusAsAnotherUser(t, dir, led)
		if err != nil || !strings.Contains(out, "1 entries") && !strings.Contains(out, "1 entry") {
			t.Errorf("status on a read-only ledger file: %v: %s; want exit 0 listing its one entry", err, out)
		}
		if fi, err := os.Stat(led); err != nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("the ledger's mode changed: %v %v", fi, err)
		}
	})
}

// readOnlyLedger makes a ledger holding one entry, read-only, in a
// directory of mode dirMode, reachable by nobody.
func readOnlyLedger(t *testing.T, dirMode os.FileMode) (dir, led string) {
	dir = filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	led = filepath.Join(dir, "ledger.db")
	if out, err := exec.Command(bin, "init", "--ledger", led).CombinedOutput(); err != nil {
		t.Fatalf("init: %v: %s", err, out)
	}
	if out, err := exec.Command(bin, "exec", "--ledger", led, "--task", "T-1", "--step", "s", "--", "true").CombinedOutput(); err != nil {
		t.Fatalf("exec: %v: %s", err, out)
	}
	if err := os.Chmod(led, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	// The test binary's parents must let nobody reach bin and the ledger.
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o001)
		}
	}
	return dir, led
}

func statusAsAnotherUser(t *testing.T, dir, led string) (string, error) {
	args := []string{"status", "--ledger", led}
	var cmd *exec.Cmd
	if os.Getuid() == 0 {
		sp, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: no way to run as a user who cannot write the ledger")
		}
		cmd = exec.Command(sp, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	t.Logf("%v: %s", err, out)
	return string(out), err
}
