package reconcile

import "github.com/ghonce/ghonce/outcome"

// Progress follows a long Reconcile: outcome.Progress.
type Progress = outcome.Progress
