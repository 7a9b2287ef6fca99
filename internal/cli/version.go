package cli

import (
	"context"
	_ "embed"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// version and commit override the module version and the VCS revision
// (make build sets both; the toolchain stamps no revision in a git
// worktree, nor with GOFLAGS=-buildvcs=false):
//
//	go build -ldflags "-X github.com/ghonce/ghonce/internal/cli.version=v1.2.3 -X github.com/ghonce/ghonce/internal/cli.commit=$(git rev-parse HEAD)" ./cmd/ghonce
var version, commit = "", ""

// archival is what `git archive` writes into archival.txt, which
// .gitattributes marks export-subst: in a tarball GitHub serves (the
// action's own source, downloaded by the runner, has no .git) it holds the
// commit and the nearest release tag; in a checkout its placeholders are
// left as they are. The Go toolchain turns export-subst off for module zips,
// so `go install ...@v1.2.3` names itself by the module version instead.
//
//go:embed archival.txt
var archival string

// versionInfo is what `ghonce version --json` prints.
type versionInfo struct {
	cmdutil.OutcomeJSON
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Dirty    bool   `json:"dirty,omitempty"`
	Go       string `json:"go"`
}

// readVersion is this binary's version, from the first source that has it:
// the -ldflags override (make build, a release), the module version (go
// install ...@v1.2.3), the tag in archival.txt (the action's build at a
// release), else "dev". The commit: the -ldflags override, else the VCS
// revision the Go toolchain stamps (a build in a git clone), else the commit in archival.txt (the
// action's build), else the one a pseudo-version names (go install
// ...@main).
func readVersion() versionInfo {
	v := versionInfo{OutcomeJSON: cmdutil.Succeeded(), Version: version, Revision: commit, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Revision == "" {
					v.Revision = s.Value
				}
			case "vcs.modified":
				v.Dirty = s.Value == "true"
			}
		}
	}
	archived, tag := parseArchival(archival)
	if v.Version == "" {
		v.Version = tag
	}
	if v.Revision == "" {
		v.Revision = archived
	}
	if v.Revision == "" && ok {
		v.Revision = pseudoRevision(bi.Main.Version)
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

// parseArchival reads archival.txt: the commit (40 hex digits) and tag,
// each "" while a placeholder was not filled in.
func parseArchival(s string) (commit, tag string) {
	for _, line := range strings.Split(s, "\n") {
		k, val, _ := strings.Cut(line, ": ")
		val = strings.TrimSpace(val)
		if strings.Contains(val, "$Format") || val == "" {
			continue
		}
		switch k {
		case "commit":
			if len(val) == 40 && strings.Trim(val, "0123456789abcdef") == "" {
				commit = val
			}
		case "describe":
			tag = val
		}
	}
	return commit, tag
}

// pseudoRevision is the commit prefix a pseudo-version ends with
// (v0.0.0-20261201170000-0123456789ab), "" for any other version.
func pseudoRevision(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || strings.Count(v, "-") < 2 {
		return ""
	}
	rev := v[i+1:]
	if len(rev) != 12 || strings.Trim(rev, "0123456789abcdef") != "" {
		return ""
	}
	return rev
}

func (v versionInfo) String() string {
	s := "ghonce " + v.Version
	var extra []string
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Dirty {
			rev += ", modified"
		}
		extra = append(extra, "commit "+rev)
	}
	extra = append(extra, v.Go)
	return s + " (" + strings.Join(extra, ", ") + ")"
}

// addVersion gives the root command --version.
func addVersion(root *cobra.Command) {
	root.Version = readVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
}

// versionOptions is `ghonce version`.
type versionOptions struct {
	f    *cmdutil.Factory
	JSON bool
}

func newCmdVersion(f *cmdutil.Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{f: f}
	c := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print ghonce's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, versionRun)
		},
	}
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func versionRun(_ context.Context, opts *versionOptions) error {
	v := readVersion()
	if opts.JSON {
		return opts.f.WriteJSON(v)
	}
	fmt.Fprintln(opts.f.IO.Out, v.String())
	return nil
}
