// Command lintproject lays out a throwaway repository in which actionlint
// can check what it cannot check in place: action.yml is action metadata,
// not a workflow, so it writes
//
//   - action.yml, copied, at the root;
//   - the example workflows with "uses: ghonce/ghonce@REF" turned into
//     "uses: ./", so actionlint checks every with: against action.yml's
//     inputs;
//   - a workflow_call workflow whose one job runs action.yml's composite
//     steps, so actionlint checks their expressions and, when shellcheck is
//     installed, their scripts.
//
// Usage (make lint): go run ./tools/lintproject DIR, then run
// actionlint in DIR.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lintproject DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "lintproject: "+err.Error())
		os.Exit(1)
	}
}

var usesUs = regexp.MustCompile(`(?m)^(\s*(?:-\s+)?uses:\s*)ghonce/ghonce@\S+`)

func run(dir string) error {
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		return err
	}
	meta, err := os.ReadFile("action.yml")
	if err != nil {
		return fmt.Errorf("read action.yml (run from the repository root): %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), meta, 0o644); err != nil {
		return err
	}
	examples, err := filepath.Glob(filepath.Join("docs", "examples", "workflows", "*.yml"))
	if err != nil || len(examples) == 0 {
		return fmt.Errorf("find example workflows: none under docs/examples/workflows")
	}
	for _, p := range examples {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := usesUs.ReplaceAll(b, []byte("${1}./"))
		if err := os.WriteFile(filepath.Join(wf, "example-"+filepath.Base(p)), out, 0o644); err != nil {
			return err
		}
	}
	var action struct {
		Inputs map[string]any `yaml:"inputs"`
		Runs   struct {
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(meta, &action); err != nil {
		return fmt.Errorf("parse action.yml: %w", err)
	}
	inputs := map[string]any{}
	for name := range action.Inputs {
		inputs[name] = map[string]any{"type": "string", "required": false}
	}
	steps := wrapSteps(action.Runs.Steps)
	w := map[string]any{
		"name": "action.yml steps",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": steps}},
	}
	b, err := yaml.Marshal(w)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(wf, "action-steps.yml"), b, 0o644)
}

// wrapSteps makes the composite steps workflow steps: github.action_path
// exists only in an action, so it is stood in for by the workspace.
func wrapSteps(steps []map[string]any) []map[string]any {
	re := regexp.MustCompile(`github\.action_path`)
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return re.ReplaceAllString(x, "github.workspace")
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	for _, s := range steps {
		walk(s)
	}
	return steps
}
