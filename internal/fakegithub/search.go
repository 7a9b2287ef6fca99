package fakegithub

import (
	"net/http"
	"slices"
	"strings"
	"unicode"
)

const (
	maxSearchQuery   = 256
	maxSearchResults = 1000
)

// searchQuery is the parsed q of /search/issues.
type searchQuery struct {
	repos   []string // owner/name, any of
	owners  []string // user:/org:, any of
	kind    string   // "pr", "issue" or ""
	state   string   // "open", "closed" or ""
	merged  *bool
	in      []string // title, body, comments; default all
	authors []string
	labels  []string
	head    string // prefix
	base    string
	terms   []string
}

// queryToken is one word of a query; quoted tokens (a "phrase") are always
// terms, never qualifiers.
type queryToken struct {
	text   string
	quoted bool
}

// tokenize splits q on spaces, keeping "quoted phrases" (also as a
// qualifier's value, label:"help wanted") together and dropping the quotes.
func tokenize(q string) []queryToken {
	var out []queryToken
	var cur strings.Builder
	inQuote, started, leadingQuote := false, false, false
	for _, r := range q {
		switch {
		case r == '"':
			if !started {
				leadingQuote = true
			}
			inQuote, started = !inQuote, true
		case unicode.IsSpace(r) && !inQuote:
			if started {
				out = append(out, queryToken{cur.String(), leadingQuote})
			}
			cur.Reset()
			started, leadingQuote = false, false
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, queryToken{cur.String(), leadingQuote})
	}
	return out
}

func parseSearch(q string) searchQuery {
	var sq searchQuery
	for _, t := range tokenize(q) {
		tok := t.text
		key, val, ok := strings.Cut(tok, ":")
		if t.quoted || !ok || val == "" {
			switch {
			case tok == "":
				continue
			case !t.quoted && (tok == "AND" || tok == "OR" || tok == "NOT"):
				continue
			}
			sq.terms = append(sq.terms, strings.ToLower(tok))
			continue
		}
		switch strings.ToLower(key) {
		case "repo":
			sq.repos = append(sq.repos, strings.ToLower(val))
		case "user", "org":
			sq.owners = append(sq.owners, strings.ToLower(val))
		case "is", "type", "state":
			switch strings.ToLower(val) {
			case "pr":
				sq.kind = "pr"
			case "issue":
				sq.kind = "issue"
			case "open", "closed":
				sq.state = strings.ToLower(val)
			case "merged", "unmerged":
				m := strings.EqualFold(val, "merged")
				sq.merged, sq.kind = &m, "pr"
			}
		case "in":
			for _, f := range strings.Split(strings.ToLower(val), ",") {
				if f == "title" || f == "body" || f == "comments" {
					sq.in = append(sq.in, f)
				}
			}
		case "author":
			sq.authors = append(sq.authors, val)
		case "label":
			sq.labels = append(sq.labels, val)
		case "head":
			sq.head = val
		case "base":
			sq.base = val
		default:
			sq.terms = append(sq.terms, strings.ToLower(tok))
		}
	}
	if len(sq.in) == 0 {
		sq.in = []string{"title", "body", "comments"}
	}
	return sq
}

func (sq *searchQuery) matches(rp *repo, is *issue) bool {
	if len(sq.repos) > 0 && !slices.Contains(sq.repos, strings.ToLower(rp.owner+"/"+rp.name)) {
		return false
	}
	if len(sq.owners) > 0 && !slices.Contains(sq.owners, strings.ToLower(rp.owner)) {
		return false
	}
	p := is.pull
	switch {
	case sq.kind == "pr" && p == nil, sq.kind == "issue" && p != nil:
		return false
	case sq.state != "" && is.state != sq.state:
		return false
	case sq.merged != nil && (p == nil || p.merged.IsZero() == *sq.merged):
		return false
	case len(sq.authors) > 0 && !slices.ContainsFunc(sq.authors, func(a string) bool { return strings.EqualFold(a, is.author) }):
		return false
	case !hasAllLabels(is, sq.labels):
		return false
	case sq.head != "" && (p == nil || !strings.HasPrefix(p.headRef, sq.head)):
		return false
	case sq.base != "" && (p == nil || p.baseRef != sq.base):
		return false
	}
	for _, t := range sq.terms {
		if !termIn(t, is, sq.in) {
			return false
		}
	}
	return true
}

func termIn(t string, is *issue, fields []string) bool {
	for _, f := range fields {
		switch f {
		case "title":
			if strings.Contains(strings.ToLower(is.title), t) {
				return true
			}
		case "body":
			if strings.Contains(strings.ToLower(is.body), t) {
				return true
			}
		case "comments":
			for _, cm := range is.comments {
				if strings.Contains(strings.ToLower(cm.body), t) {
					return true
				}
			}
		}
	}
	return false
}

type searchResultJSON struct {
	TotalCount        int          `json:"total_count"`
	IncompleteResults bool         `json:"incomplete_results"`
	Items             []*issueJSON `json:"items"`
}

// searchIssues serves GET /search/issues?q=. It supports repo:, user:,
// org:, is:/type: pr|issue|open|closed|merged|unmerged, state:, in:title,
// in:body, in:comments, author:, label:, head: (a prefix match, as on
// GitHub), base:, and terms (bare or "quoted") matched as substrings
// without case; every part must match. Sorting: sort=created|updated|
// comments with order (default: newest first). Like GitHub's, the index is
// eventually consistent: an item shows only once it was created at least
// the search lag ago (Server.SetSearchLag) and then with its current state.
// Queries over 256 characters, a repo: that does not exist and pages past
// the first 1,000 results are 422.
func (s *Server) searchIssues(c *call) *reply {
	q := c.r.URL.Query()
	raw := q.Get("q")
	if strings.TrimSpace(raw) == "" {
		return validationFailed(apiError{Resource: "Search", Field: "q", Code: "missing"})
	}
	if len([]rune(raw)) > maxSearchQuery {
		return validationFailed(apiError{Message: "The search is longer than 256 characters.", Resource: "Search", Field: "q", Code: "invalid"})
	}
	p := parsePager(q)
	if (p.page-1)*p.perPage >= maxSearchResults {
		return errorReply(http.StatusUnprocessableEntity, "Only the first 1000 search results are available")
	}
	sq := parseSearch(raw)

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range sq.repos {
		if s.repos[name] == nil {
			return validationFailed(apiError{Message: "The listed users and repositories cannot be searched either because the resources do not exist or you do not have permission to view them.", Resource: "Search", Field: "q", Code: "invalid"})
		}
	}
	visibleBefore := s.now().Add(-s.searchLag)
	type hit struct {
		rp *repo
		is *issue
	}
	var hits []hit
	for _, rp := range s.repos {
		for _, is := range rp.issues {
			if is.created.After(visibleBefore) || !sq.matches(rp, is) {
				continue
			}
			hits = append(hits, hit{rp, is})
		}
	}
	order := q.Get("order")
	if order == "" {
		order = "desc"
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		var d int
		switch q.Get("sort") {
		case "updated":
			d = a.is.updated.Compare(b.is.updated)
		case "comments":
			d = len(a.is.comments) - len(b.is.comments)
		default:
			d = a.is.created.Compare(b.is.created)
		}
		if d == 0 {
			d = int(a.is.id - b.is.id)
		}
		if order == "asc" {
			return d
		}
		return -d
	})
	total := len(hits)
	hits = hits[:min(total, maxSearchResults)]
	lo, hi, link := s.paginate(c, "/search/issues", len(hits))
	items := make([]*issueJSON, 0, hi-lo)
	score := 1.0
	for _, h := range hits[lo:hi] {
		it := s.issueJSON(h.rp, h.is)
		it.Score = &score
		items = append(items, it)
	}
	rep := jsonReply(http.StatusOK, searchResultJSON{TotalCount: total, IncompleteResults: false, Items: items})
	if link != "" {
		rep.header = http.Header{"Link": {link}}
	}
	return rep
}
