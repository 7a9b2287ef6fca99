package ghshim

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// expandGhAlias expands a command line that starts with an alias the user
// defined with `gh alias set` (gh's config.yml, "aliases:"), as the real gh
// does before it runs it: $1, $2... take the arguments after the alias,
// the others are appended. The real gh expands inside itself, after the
// shim handed it over, so without this `gh ic` for `issue create` would
// create unguarded. A shell alias ("!..."), an expansion that does not
// parse, or one missing an argument is left to the real gh (a shell
// alias's own gh is the shim). gh refuses an alias named like one of its
// commands, so a built-in command is never expanded.
func expandGhAlias(args []string, getenv func(string) string) ([]string, bool) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, false
	}
	exp, ok := ghAliases(getenv)[args[0]]
	if !ok || strings.HasPrefix(exp, "!") {
		return nil, false
	}
	var extra []string
	for i, a := range args[1:] {
		if !strings.Contains(exp, "$") {
			extra = append(extra, a)
		} else {
			exp = strings.ReplaceAll(exp, "$"+strconv.Itoa(i+1), a)
		}
	}
	if lingering.MatchString(exp) {
		return nil, false
	}
	words, ok := splitShellWords(exp)
	if !ok {
		return nil, false
	}
	return append(words, extra...), true
}

var lingering = regexp.MustCompile(`\$\d`)

// ghAliases reads the aliases of gh's config.yml: $GH_CONFIG_DIR, else
// $XDG_CONFIG_HOME/gh, else ~/.config/gh.
func ghAliases(getenv func(string) string) map[string]string {
	dir := getenv("GH_CONFIG_DIR")
	switch {
	case dir != "":
	case getenv("XDG_CONFIG_HOME") != "":
		dir = filepath.Join(getenv("XDG_CONFIG_HOME"), "gh")
	case getenv("HOME") != "":
		dir = filepath.Join(getenv("HOME"), ".config", "gh")
	default:
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.yml"))
	if err != nil {
		return nil
	}
	var cfg struct {
		Aliases map[string]string `yaml:"aliases"`
	}
	if yaml.Unmarshal(b, &cfg) != nil {
		return nil
	}
	return cfg.Aliases
}

// splitShellWords splits s into words as a POSIX shell would, quotes
// ('...', "..." with \ escapes) and backslashes, without expansions; false
// for an unterminated quote.
func splitShellWords(s string) ([]string, bool) {
	var words []string
	var w strings.Builder
	in := false // a word is started (even an empty quoted one)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, true
}
