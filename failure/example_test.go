package failure_test

import (
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// A task runner's adapter ends a step as the ghonce command would: the
// exit code a script or CI system reads, and a kind that says whether to
// fix the input, rerun, or wait, without parsing a message.
func ExampleDescribe() {
	// Bad input: Prepare refuses it before anything is recorded or sent.
	_, err := reconcile.Prepare(reconcile.Action{Task: "ISSUE-42", Repo: "o/r",
		Spec: reconcile.PR{Base: "main", Head: "bad..branch", Title: "Fix"}})
	f := failure.Describe(err, "", nil)
	fmt.Println(f.ExitCode, f.Error.Kind)

	// The engine could not confirm the pull request: it may exist, so the
	// same action is run again later, never a different one.
	err = &outcome.UnconfirmedError{Key: "gk1_example", Err: errors.New("GitHub did not answer")}
	f = failure.Describe(err, "", nil)
	fmt.Println(f.ExitCode, f.Error.Kind, f.Key, f.State)
	// Output:
	// 2 usage
	// 3 unconfirmed gk1_example attempting
}
