package ledger

import (
	"strings"
	"testing"
)

func TestResolvePath(t *testing.T) {
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{
			name: "flag wins over everything",
			flag: "/flag/ledger.db",
			env:  map[string]string{"GHONCE_LEDGER": "/env/l.db", "XDG_STATE_HOME": "/xdg", "HOME": "/home/u"},
			want: "/flag/ledger.db",
		},
		{
			name: "relative flag is kept as given",
			flag: "rel/ledger.db",
			env:  map[string]string{"HOME": "/home/u"},
			want: "rel/ledger.db",
		},
		{
			name: "GHONCE_LEDGER wins over XDG and HOME",
			env:  map[string]string{"GHONCE_LEDGER": "/env/l.db", "XDG_STATE_HOME": "/xdg", "HOME": "/home/u"},
			want: "/env/l.db",
		},
		{
			name: "GHONCE_LEDGER wins over a GitHub Actions runner's temp",
			env:  map[string]string{"GHONCE_LEDGER": "/env/l.db", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": "/rt"},
			want: "/env/l.db",
		},
		{
			name: "a GitHub Actions runner's temp wins over XDG",
			env:  map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": "/rt", "XDG_STATE_HOME": "/xdg"},
			want: "/rt/ghonce/ledger.db",
		},
		{
			name: "RUNNER_TEMP outside Actions is ignored",
			env:  map[string]string{"RUNNER_TEMP": "/rt", "XDG_STATE_HOME": "/xdg"},
			want: "/xdg/ghonce/ledger.db",
		},
		{
			name: "XDG_STATE_HOME wins over HOME",
			env:  map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/u"},
			want: "/xdg/ghonce/ledger.db",
		},
		{
			name: "relative XDG_STATE_HOME is ignored",
			env:  map[string]string{"XDG_STATE_HOME": "xdg", "HOME": "/home/u"},
			want: "/home/u/.local/state/ghonce/ledger.db",
		},
		{
			name: "HOME as last resort",
			env:  map[string]string{"HOME": "/home/u"},
			want: "/home/u/.local/state/ghonce/ledger.db",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePath(tt.flag, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatalf("ResolvePath: %v", err)
			}
			if got != tt.want {
				t.Errorf("ResolvePath = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolvePathNoHome(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"XDG_STATE_HOME": "relative/only"},
	} {
		_, err := ResolvePath("", func(k string) string { return env[k] })
		if err == nil {
			t.Fatalf("ResolvePath with env %v: no error", env)
		}
		for _, hint := range []string{"GHONCE_LEDGER", "HOME"} {
			if !strings.Contains(err.Error(), hint) {
				t.Errorf("error %q does not mention %s", err, hint)
			}
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("error %q names a flag: a library caller has none (the CLI adds its own hint)", err)
		}
	}
}

func TestResolvePathNilGetenv(t *testing.T) {
	if got, err := ResolvePath("/x.db", nil); err != nil || got != "/x.db" {
		t.Errorf("ResolvePath(flag, nil) = %q, %v", got, err)
	}
	if _, err := ResolvePath("", nil); err == nil {
		t.Error("ResolvePath(\"\", nil): no error")
	}
}
