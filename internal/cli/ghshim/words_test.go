package ghshim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// A typed advice is said once, where the front maps the failure: ghonce's
// verbs name the step by their flag, the gh shim by the variable it reads,
// the ghonce action by its input; the facts before it are the library's.
func TestTypedAdviceInEachFrontsWords(t *testing.T) {
	adv := &effect.AdviceError{Err: errors.New("the name is taken"), Option: effect.Option{Name: "step"}, Step: "use another %s"}
	err := &failure.Keyed{Key: "gk1_k", Err: fmt.Errorf("create branch: %w", adv)}
	for _, c := range []struct {
		front string
		w     effect.Words
		want  string
	}{
		{"ghonce's verbs", cmdutil.FlagWords{}, "create branch: the name is taken: use another --step"},
		{"the gh shim", ghWords{}, "create branch: the name is taken: use another GHONCE_STEP"},
		{"the ghonce action", actions.Inputs{}, "create branch: the name is taken: use another step:"},
	} {
		if got := failure.Describe(err, "branch create", c.w).Error.Message; !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q; want %q", c.front, got, c.want)
		}
	}
	if got := err.Error(); got != "create branch: the name is taken" {
		t.Errorf("the library's own text: %q; want what and why, no front's words", got)
	}
}
