package reconcile

import "testing"

// Every kind says how its target alone is held and checked, so `ghonce
// key` and ghonce_key (KeyOfTarget) can derive its key through the door
// the acting verbs use.
func TestEveryKindAims(t *testing.T) {
	for kind, mk := range kinds {
		if _, ok := mk().(aimer); !ok {
			t.Errorf("kind %s has no aim(target): KeyOfTarget cannot key it", kind)
		}
	}
}
