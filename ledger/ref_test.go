package ledger

import (
	"fmt"
	"testing"
)

func TestRefName(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{Ref{Number: 7, ID: 70, URL: "https://github.com/o/r/pull/7"}, "https://github.com/o/r/pull/7"},
		{Ref{SHA: "0123abcd"}, "0123abcd"},
		{Ref{Number: 7}, "#7"},
		{Ref{Text: "exit 0"}, ""},
		{Ref{}, ""},
	} {
		t.Run(fmt.Sprintf("%+v", tc.ref), func(t *testing.T) {
			if got := tc.ref.Name(); got != tc.want {
				t.Errorf("%+v.Name() = %q, want %q", tc.ref, got, tc.want)
			}
		})
	}
}
