package mcpcmd

import "testing"

// github-mcp-server's GITHUB_HOST and ghonce's GITHUB_API_URL name the
// same GitHub: each is derived from the other where only one is set.
func TestGitHubHostAndAPIURL(t *testing.T) {
	for _, c := range []struct{ host, api string }{
		{"https://github.com", ""},
		{"https://acme.ghe.com", "https://api.acme.ghe.com/"},
		{"https://ghe.example.com", "https://ghe.example.com/api/v3/"},
		{"http://127.0.0.2", "http://127.0.0.2/api/v3/"},
	} {
		t.Run("host "+c.host, func(t *testing.T) {
			if got := apiURLOfHost(c.host); got != c.api {
				t.Errorf("apiURLOfHost(%q) = %q, want %q", c.host, got, c.api)
			}
		})
	}
	for _, c := range []struct{ api, host string }{
		{"https://api.github.com", ""},
		{"https://api.github.com/", ""},
		{"https://api.acme.ghe.com/", "https://acme.ghe.com"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com"},
		{"http://127.0.0.2:80/api/v3/", "http://127.0.0.2"},
		// github-mcp-server drops ports: a host it cannot reach is not given.
		{"http://127.0.0.1:8080/api/v3/", ""},
		{"https://ghe.example.com/some/proxy", ""},
	} {
		t.Run("api "+c.api, func(t *testing.T) {
			if got := hostOfAPIURL(c.api); got != c.host {
				t.Errorf("hostOfAPIURL(%q) = %q, want %q", c.api, got, c.host)
			}
		})
	}
}
