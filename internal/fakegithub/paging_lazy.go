package fakegithub

// pageReplyOf answers one page of n items, building only that page's
// representations (item(i) for each i on it): a repository-wide listing of
// tens of thousands of items then costs a page's work per request, not the
// whole list's, as on GitHub.
func pageReplyOf[T any](s *Server, c *call, linkPath string, n int, item func(i int) T) *reply {
	lo, hi, link := s.paginate(c, linkPath, n)
	items := make([]T, 0, hi-lo)
	for i := lo; i < hi; i++ {
		items = append(items, item(i))
	}
	rep := jsonReply(200, items)
	if link != "" {
		rep.header = map[string][]string{"Link": {link}}
	}
	return rep
}
