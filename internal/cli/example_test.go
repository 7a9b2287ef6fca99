package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// Every verb's help shows its kinds' examples (Face.Example) as command
// lines that parse into those very examples: a user can paste one.
func TestVerbExamplesParseIntoTheKindsExamples(t *testing.T) {
	t.Parallel()
	f := &cmdutil.Factory{IO: IO{Getenv: func(string) string { return "" }}}
	// By verb: its first kind, and its kinds' examples.
	owner, examples := map[string]string{}, map[string][]any{}
	// A guarded command's verb (exec) is its own, not built from its Face.
	for _, k := range reconcile.Kinds() {
		face, _ := kinds.FaceOf(k)
		ex, err := kinds.DecodeValue(k, []byte(face.Example))
		for _, verb := range face.CLI {
			if owner[verb] == "" {
				owner[verb] = k
			}
			if face.Example != "" && err == nil {
				examples[verb] = append(examples[verb], ex)
			}
		}
	}
	for verb, k := range owner {
		var got *kindRun
		c := newCmdKind(f, k, verb, func(r *kindRun) error { got = r; return nil })
		lines := strings.Split(strings.TrimSpace(c.Example), "\n")
		if len(examples[verb]) == 0 || len(lines) != len(examples[verb]) {
			t.Errorf("ghonce %s: examples %q, want one line for each of %v", verb, c.Example, examples[verb])
			continue
		}
		for i, line := range lines {
			words := shellWords(line)
			if !strings.HasPrefix(strings.Join(words, " "), "ghonce "+verb+" ") {
				t.Errorf("example %q is not of ghonce %s", line, verb)
				continue
			}
			c := newCmdKind(f, k, verb, func(r *kindRun) error { got = r; return nil })
			c.SetArgs(words[len(strings.Fields(verb))+1:])
			if err := c.Execute(); err != nil || !reflect.DeepEqual(got.Spec, examples[verb][i]) || got.Act.Task == "" {
				t.Errorf("ghonce %s's example %q: %v, parsed %+v; want %+v under a task", verb, line, err, got, examples[verb][i])
			}
		}
	}
}

// shellWords splits line as a POSIX shell does a line of plain and
// single-quoted words.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in, any := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				words = append(words, w.String())
			}
			w.Reset()
			any = false
		default:
			w.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, w.String())
	}
	return words
}
