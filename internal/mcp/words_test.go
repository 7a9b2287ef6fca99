package mcp

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
)

// A typed advice reaches the model in its words: the step is an argument
// of the call (step), never a flag or a variable of another front.
func TestTypedAdviceInTheModelsWords(t *testing.T) {
	adv := &effect.AdviceError{Err: errors.New("the name is taken"), Option: effect.Option{Name: "step"}, Step: "use another %s"}
	got := toolError(fmt.Errorf("create branch: %w", adv)).Error()
	if !strings.HasPrefix(got, "create branch: the name is taken: use another step") || strings.Contains(got, "--") || strings.Contains(got, "GHONCE_") {
		t.Errorf("tool error: %q; want the step argument named", got)
	}
	if !errors.As(toolError(adv), &adv) {
		t.Error("the tool error lost the advice it says")
	}
}
