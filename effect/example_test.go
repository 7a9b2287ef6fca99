package effect_test

import (
	"fmt"

	"github.com/ghonce/ghonce/effect"
)

// A front names a bad field in its own words: here a CLI, whose flag for
// each field is --FIELD.
func ExampleNamed() {
	err := &effect.InvalidError{Field: "base", Problem: "is empty", Want: "the branch to merge into"}
	fmt.Println(err)
	fmt.Println(effect.Named(err, func(field string) string { return "--" + field }))
	// Output:
	// base is empty: want the branch to merge into
	// --base is empty: want the branch to merge into
}
