package procid

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/ghonce/ghonce/ledger"
)

// Self returns the running process's identity; parts it cannot read are
// left zero (and the identity is then never proven gone).
func Self() ledger.Proc {
	p, _ := Of(os.Getpid())
	return p
}

// Of returns the identity of the process pid of this machine, in this
// process's PID namespace.
func Of(pid int) (ledger.Proc, error) {
	p := ledger.Proc{PID: pid, Boot: bootID(), PIDNS: pidNS()}
	st, err := stat(pid)
	if err != nil {
		return p, err
	}
	p.Start = st.start
	return p, nil
}

// Check says what can be proven about p from this process.
func Check(p ledger.Proc) State {
	if !p.Complete() || p.Boot != bootID() || p.PIDNS != pidNS() || p.PIDNS == 0 {
		return Unknown
	}
	st, err := stat(p.PID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Gone
	case err != nil:
		return Unknown
	case st.start != p.Start, st.state == 'Z', st.state == 'X':
		return Gone
	}
	return Alive
}

// GroupAlive reports whether any process of this PID namespace is in the
// process group pgid (kill(-pgid, 0) finds one, or may not signal it).
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

type procStat struct {
	state byte
	ppid  int
	pgrp  int
	start uint64
}

// stat reads /proc/PID/stat: the state (field 3), the parent (4), the
// process group (5) and the start time (22). The command name (field 2)
// is in parentheses and may hold spaces and parentheses: the fields are
// counted from the last ')'.
func stat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("read /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("read /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, nil
}

// Members returns the processes of this PID namespace whose parent is
// ppid or whose process group is pgid (either may be 0 for none).
func Members(ppid, pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := stat(pid)
		if err != nil || st.state == 'Z' || st.state == 'X' {
			continue
		}
		if (ppid > 0 && st.ppid == ppid) || (pgid > 0 && st.pgrp == pgid) {
			out = append(out, pid)
		}
	}
	return out
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func pidNS() uint64 {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return st.Ino
}
