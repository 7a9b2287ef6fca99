package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// route is a kind's REST write, as its reconcile.Face declares it.
type route struct {
	kind, method string
	segs         []string // the path after the API root, split at "/"
	face         reconcile.Face
}

// routes are the writes the Transport guards: every kind with a REST write.
var routes = func() []route {
	var out []route
	for _, k := range reconcile.Kinds() {
		f, _ := kinds.FaceOf(k)
		if method, path, ok := strings.Cut(f.Write, " "); ok {
			out = append(out, route{kind: k, method: method, segs: strings.Split(path, "/"), face: f})
		}
	}
	return out
}()

// write is a request the Transport recognises as one of the guarded kinds.
type write struct {
	*route
	root         string            // the API root, e.g. https://api.github.com/
	params       map[string]string // the path's parameters, owner and repo among them
	method, rest string            // rest: the path after the API root, e.g. repos/o/r/pulls
}

// parseWrite recognises req as a guarded write; otherwise it returns nil
// and why it is not one.
func parseWrite(req *http.Request) (*write, string) {
	p := req.URL.EscapedPath()
	i := strings.Index(p, "/repos/")
	if i < 0 {
		return nil, "not a write the guard knows"
	}
	rest := p[i+1:]
	for j := range routes {
		if params, ok := routes[j].match(req.Method, rest); ok {
			return &write{route: &routes[j], root: req.URL.Scheme + "://" + req.URL.Host + p[:i+1], params: params, method: req.Method, rest: rest}, ""
		}
	}
	var known []string
	for _, r := range routes {
		known = append(known, r.face.Write)
	}
	return nil, fmt.Sprintf("%s /%s is not a write the guard knows (it guards %s)", req.Method, rest, strings.Join(known, ", "))
}

// match binds r's path parameters in rest (escaped), when rest is r's
// write. A parameter bound to a number must be a positive one.
func (r *route) match(method, rest string) (map[string]string, bool) {
	if method != r.method {
		return nil, false
	}
	segs := strings.Split(rest, "/")
	numeric := reconcile.Fields(r.kind)
	params := map[string]string{}
	for i, pat := range r.segs {
		name, isParam := param(pat)
		switch {
		case i >= len(segs) || segs[i] == "":
			return nil, false
		case !isParam:
			if segs[i] != pat {
				return nil, false
			}
			continue
		case strings.HasSuffix(name, "..."):
			parts := slices.Clone(segs[i:])
			for j := range parts {
				parts[j] = unescape(parts[j])
			}
			params[strings.TrimSuffix(name, "...")] = strings.Join(parts, "/")
			return params, true
		}
		params[name] = unescape(segs[i])
		if n, err := strconv.Atoi(params[name]); numeric[name] && (err != nil || n <= 0) {
			return nil, false
		}
	}
	return params, len(segs) == len(r.segs)
}

func param(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// fieldName is what a request of r calls field, for an error that names
// it (effect.Named), from the kind's Face: the body field that holds it,
// the path parameter that binds it, or, for the action's own fields,
// where the transport takes them from.
func (r *route) fieldName(field string) string {
	switch field {
	case "task":
		return "the task (guard.WithStep or GHONCE_TASK)"
	case "step":
		return "the step (guard.WithStep)"
	case "repo":
		return "the repository in the URL path"
	}
	for wire, v := range r.face.Wire {
		if p, ok := effect.WireParam(v); ok && p == field {
			return wire
		}
	}
	if slices.Contains(r.face.Params(), field) {
		return "the URL path's " + field
	}
	return field
}

// notGuarded says a write of a known kind asks for something its kind
// cannot carry; it is then handled as an unknown write.
type notGuarded struct{ why string }

func (e *notGuarded) Error() string { return e.why }

// action reads req's body (returned, so the request can still be sent) and
// builds the engine's action.
func (w *write) action(req *http.Request, task, stepName string) (reconcile.Action, []byte, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return reconcile.Action{}, nil, fmt.Errorf("read request body: %w", err)
		}
	}
	// An empty step is the kind's default (reconcile.DefaultStepper), as
	// through every other front.
	a := reconcile.Action{Task: task, Step: stepName, Repo: w.params["owner"] + "/" + w.params["repo"]}
	var err error
	a.Spec, err = w.spec(body)
	return a, body, err
}

// spec decodes body and the path's parameters into the kind's description:
// a body field is the kind's field of the same name, or what the kind's
// Face.Wire says it holds; a bare JSON array is the value of the kind's
// only body field (go-github sends labels so). Fields the kind cannot
// carry make the write a notGuarded one: dropping them would create
// something other than what the caller asked for.
func (w *write) spec(body []byte) (reconcile.Spec, error) {
	var m map[string]json.RawMessage
	if carried := reconcile.BodyFields(w.kind); len(carried) == 1 && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		// A bare array is the one field's value, as GitHub takes it
		// (go-github sends labels so).
		m = map[string]json.RawMessage{carried[0]: body}
	} else if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	carried := reconcile.BodyFields(w.kind)
	payload := map[string]any{}
	var extra []string
	for k, v := range m {
		tmpl, renamed := w.face.Wire[k]
		switch {
		case string(v) == "null":
		case !slices.Contains(carried, k):
			extra = append(extra, k)
		case renamed:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("decode request body: %s: %w", k, err)
			}
			field, _ := effect.WireParam(tmpl)
			prefix, _, _ := strings.Cut(tmpl, "{")
			val, ok := strings.CutPrefix(s, prefix)
			if !ok {
				return nil, &notGuarded{why: fmt.Sprintf("%s %q is not the guard's %s kind's (%s)", k, s, w.kind, tmpl)}
			}
			payload[field] = val
		default:
			payload[k] = v
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, &notGuarded{why: fmt.Sprintf("the guard's %s kind cannot carry %s (send them in a separate write after the guarded one)", w.kind, strings.Join(extra, ", "))}
	}
	numeric := reconcile.Fields(w.kind)
	for _, p := range w.face.Params() {
		payload[p] = w.params[p]
		if numeric[p] {
			payload[p], _ = strconv.Atoi(w.params[p]) // match checked it
		}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return reconcile.DecodeSpec(w.kind, b)
}

// restoreBody gives req its body back after action read it.
func restoreBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}
