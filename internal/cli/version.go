package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version overrides the module version of a release build:
//
//	go build -ldflags "-X github.com/ghonce/ghonce/internal/cli.version=v1.2.3" ./cmd/ghonce
var version = ""

// versionInfo is what `ghonce version --json` prints.
type versionInfo struct {
	outcomeJSON
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Dirty    bool   `json:"dirty,omitempty"`
	Go       string `json:"go"`
}

// readVersion is this binary's version: the -ldflags override, else the
// module version and VCS revision recorded by the Go toolchain.
func readVersion() versionInfo {
	v := versionInfo{outcomeJSON: succeeded(), Version: version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Dirty = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
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

func newCmdVersion(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version [--json]",
		Short: "Print ghonce's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v := readVersion()
			if f.g.json {
				return f.writeJSON(v)
			}
			fmt.Fprintln(f.sys.Out, v.String())
			return nil
		},
	}
}
