package fakegithub

import "net/http"

func init() { handle(map[string]repoEndpoint{"GET ": (*Server).getRepo}) }

// getUser serves GET /user: the token's own identity.
func (s *Server) getUser(c *call) *reply {
	if rep := s.installationUser(c.login); rep != nil {
		return rep
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return jsonReply(http.StatusOK, s.userJSON(c.login))
}

// getRepo serves GET /repos/{owner}/{repo}.
func (s *Server) getRepo(c *call, rp *repo) *reply {
	return jsonReply(http.StatusOK, s.repoJSON(rp))
}
