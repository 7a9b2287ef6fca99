// Package procid names processes so that "this process is gone" can be
// proven, not guessed. A PID alone proves nothing: another machine (two
// hosts of one name), another PID namespace (a container with host
// networking shares the host's name, not its PIDs) or a later process
// that reused the number all answer kill(pid, 0) as if they were the
// holder. A ledger.Proc adds the kernel's boot id, the PID namespace's
// inode and the process's start time; Gone is true only when those prove
// that the process named no longer runs.
package procid

// State is what can be proven about a process.
type State int

const (
	// Unknown: the process was named on another machine, boot or PID
	// namespace, or its identity is incomplete: nothing can be proven
	// from here.
	Unknown State = iota
	// Alive: the process runs (same boot, namespace, PID and start time).
	Alive
	// Gone: the process named no longer runs: its PID is free, names a
	// zombie, or names a process that started at another time.
	Gone
)

func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Gone:
		return "gone"
	}
	return "unknown"
}
