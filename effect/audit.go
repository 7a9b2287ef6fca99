package effect

// Audit is how `ghonce audit` finds the kind's duplicates on a repository
// and what --apply may do with one: the audit names no kind, it reads these.
type Audit struct {
	// Rank orders the audit's kinds: their listings, groups and --kind.
	Rank int
	// Listing names the ghcheck listing its artifacts are read from
	// (ghcheck.Lists); empty: the audit accepts the kind and groups none.
	// Optional: read only when --kind names it (its listing is costly).
	Listing  string
	Optional bool
	// Ref names one of its artifacts in a report, "{number}", "{id}",
	// "{thread}" and "{name}" standing for its parts: "#{number}" is an
	// issue's or pull request's, "comment {id} on #{thread}" one on a thread.
	Ref string
	// Same is what two of our artifacts share, beside their author, to be
	// the same act: "thread" (a key then groups only on one), "title",
	// "body" (normalised), "event", "line", "tag", "base", "head" (a pull
	// request's: the same commit or tree), "label" (added again: events,
	// never open). Detail says it in words.
	Same   []string
	Detail string
	// Settle is what --apply does with a duplicate the kept one holds byte
	// for byte: "close" (an issue, as a duplicate) or "close-pr", after a
	// comment linking the kept one, or "delete"; empty: nothing, Leave
	// says why.
	Settle, Leave string
	// Reactors: who reacted can be read (an issue's, a pull request's, an
	// issue comment's); else any reaction counts as a person's.
	Reactors bool
}
