package reconcile

import "github.com/ghonce/ghonce/internal/once"

// Progress follows a long Reconcile (the CLI draws a bar on a terminal).
// Calls come from one goroutine at a time: Start says how many entries
// will be settled; Settled reports one entry settled (or left attempting).
type Progress = once.Progress
