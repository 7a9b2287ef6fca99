package crashpoint

// The crash points, in the order an action passes them.
const (
	// AfterClaim: the intent is durable in the ledger; nothing was asked of GitHub.
	AfterClaim = "after-claim"
	// BeforeCreate: GitHub said absent; the create request has not left.
	BeforeCreate = "before-create"
	// AfterCreate: GitHub answered the create; "done" is not written yet.
	AfterCreate = "after-create"
	// InFinish: inside the ledger transaction that records the outcome, before it commits.
	InFinish = "in-finish"
)
