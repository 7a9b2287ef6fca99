package effect

// Audit is how `ghonce audit` finds the kind's duplicates on a repository
// and what --apply may do with one, declared in the kind's Face: the audit
// names no kind, it reads these.
type Audit struct {
	// Rank places the kind among the audit's: its artifacts are read, its
	// groups reported and its name listed in --kind's help after those of
	// a smaller Rank.
	Rank int
	// Listing names the ghcheck listing its artifacts are read from
	// (ghcheck.Lists); empty: the audit accepts the kind and groups none.
	Listing string
	// Optional: read only when --kind names it (its listing is costly).
	Optional bool
	// Ref is how a report names one of its artifacts, "{number}", "{id}",
	// "{thread}" and "{name}" standing for its parts: "#{number}" is an
	// issue's or pull request's (a thread with a timeline of its own),
	// "comment {id} on #{thread}" one on such a thread.
	Ref string
	// Same is what two of our artifacts share, beside their author, to be
	// the same act: "thread" (the issue or pull request they are on; a key
	// then groups only on one), "title", "body" (each normalised),
	// "event", "line", "tag", "base", "head" (a pull request's: the same
	// commit or tree), "label" (the same label added again: events, not
	// artifacts, never open).
	Same []string
	// Detail says Same in words, as a group of them does.
	Detail string
	// Settle is what --apply does with a duplicate the kept one holds byte
	// for byte: "close" (an issue, as a duplicate) or "close-pr", each
	// after a comment linking the kept one, or "delete"; empty: nothing,
	// and Leave says why.
	Settle, Leave string
	// Reactors: who reacted to one can be read (an issue's, a pull
	// request's, an issue comment's reactions); otherwise a reaction
	// counts as a person's.
	Reactors bool
}
