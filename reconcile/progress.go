package reconcile

// Progress follows a long Reconcile (the CLI draws a bar on a terminal).
// Calls come from one goroutine at a time.
type Progress interface {
	// Start says how many entries will be settled.
	Start(total int)
	// Settled reports one entry settled (or left attempting).
	Settled(s Settlement)
}
