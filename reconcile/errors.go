package reconcile

// refusal is a look-up's answer that the description cannot be acted on as
// given (a start ref that names no commit): nothing was created, and the
// same description is refused again until it is fixed. The entry fails.
type refusal struct{ err error }

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }
