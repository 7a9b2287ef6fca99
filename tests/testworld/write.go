package testworld

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/reconcile"
)

// WriteOf is the REST write spec stands for (its Face's Write) in
// owner/repo, each other path parameter bound to spec's field of that
// JSON name.
func WriteOf(spec reconcile.Spec, owner, repo string) (method, path string) {
	var fields map[string]any
	b, _ := json.Marshal(spec)
	_ = json.Unmarshal(b, &fields)
	fields["owner"], fields["repo"] = owner, repo
	method, path, _ = strings.Cut(spec.Face().Write, " ")
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if p, ok := effect.WireParam(seg); ok {
			segs[i] = fmt.Sprint(fields[p])
		}
	}
	return method, "/" + strings.Join(segs, "/")
}
