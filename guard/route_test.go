package guard

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// Every kind whose Face declares a REST write is guarded: a go-github
// request of that write, with every body field the kind carries, is
// recognised as the kind's and decoded into its description, path
// parameters included.
func TestEveryDeclaredWriteIsGuarded(t *testing.T) {
	sample := map[string]string{"owner": "octo-org", "repo": "hello-world", "number": "42", "path...": "docs/CHANGE LOG.md", "path": "docs/CHANGE LOG.md"}
	var guarded int
	for _, kind := range reconcile.Kinds() {
		f, _ := kinds.FaceOf(kind)
		if f.Write == "" {
			continue
		}
		guarded++
		method, path, _ := strings.Cut(f.Write, " ")
		segs := strings.Split(path, "/")
		for i, s := range segs {
			if p, ok := param(s); ok {
				segs[i] = strings.ReplaceAll(sample[p], " ", "%20")
			}
		}
		// Every body field: the example's value, else one of its type.
		var example map[string]any
		_ = json.Unmarshal([]byte(f.Example), &example)
		types, body := kinds.FieldTypes(kind), map[string]any{}
		for _, field := range reconcile.BodyFields(kind) {
			name, prefix := field, ""
			if w, ok := f.Wire[field]; ok {
				prefix, _, _ = strings.Cut(w, "{")
				name, _ = effect.WireParam(w)
			}
			v, ok := example[name]
			if !ok {
				v = sampleOf(types[name])
			}
			if s, ok := v.(string); ok {
				v = prefix + s
			}
			body[field] = v
		}
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(method, "https://ghe.example/api/v3/"+strings.Join(segs, "/"), strings.NewReader(string(b)))
		w, why := parseWrite(req)
		if w == nil || w.kind != kind {
			t.Errorf("%s: %s is not routed to it (%s)", kind, f.Write, why)
			continue
		}
		if w.root != "https://ghe.example/api/v3/" || w.params["owner"] != "octo-org" || w.params["repo"] != "hello-world" {
			t.Errorf("%s: root %q, params %v", kind, w.root, w.params)
		}
		spec, err := w.spec(b)
		if err != nil {
			t.Errorf("%s: decode %s: %v", kind, b, err)
			continue
		}
		got, _ := json.Marshal(spec)
		for _, p := range f.Params() {
			if !strings.Contains(string(got), strings.TrimPrefix(sample[p], "docs/")) && !strings.Contains(string(got), ":"+sample[p]) {
				t.Errorf("%s: path parameter %s is not in the description %s", kind, p, got)
			}
		}
	}
	if guarded != len(routes) || guarded < 5 {
		t.Errorf("%d kinds declare a REST write, %d routes", guarded, len(routes))
	}
}

// sampleOf is a value of type t with every part set: "x", 1, true, a
// list of one.
func sampleOf(t reflect.Type) any {
	if t == nil {
		return "x"
	}
	v := reflect.New(t).Elem()
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.Uint8:
			v.SetUint('x')
		case reflect.Slice:
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e)
			v.Set(reflect.Append(v, e))
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		}
	}
	fill(v)
	return v.Interface()
}
