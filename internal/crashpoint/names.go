package crashpoint

// The crash points, in the order an action passes them.
const (
	// AfterClaim: the intent is durable in the ledger; nothing was asked of GitHub.
	AfterClaim = "after-claim"
	// BeforeCreate: GitHub said absent; the create request has not left.
	BeforeCreate = "before-create"
	// AfterCreate: GitHub answered the create; "done" is not written yet.
	AfterCreate = "after-create"
	// BeforeTags: GitHub answered the create of an artifact tagged once it
	// exists (a PR, labelled after its create); the tags are not sent and
	// "done" is not written. A server that answers before tagging
	// (reconcile.Config.AnswerBeforeTags) has answered already.
	BeforeTags = "before-tags"
	// InFinish: inside the ledger transaction that records the outcome, before it commits.
	InFinish = "in-finish"
)
