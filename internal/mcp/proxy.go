package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/kinds"
)

// Proxy is ghonce in front of an upstream MCP server (github-mcp-server):
// the agent sees one server whose tools are upstream's, in upstream's
// order, with upstream's names, schemas and annotations; the write tools
// ghonce guards (guards) go through the engine, everything else goes to
// upstream and back untouched: read-only tools, resources, prompts,
// completions, logging, progress, cancellation and _meta, list-changed
// notifications.
type Proxy struct {
	s  *Server
	up *child
	// upCaps are upstream's capabilities, mirrored to the agent.
	upCaps *sdk.ServerCapabilities

	mu    sync.Mutex
	tools []*sdk.Tool // as the agent sees them, in upstream's order
	// progress maps the progress tokens of the latest calls to the agent's
	// session that made them, for upstream's progress notifications (which
	// the SDK may deliver after the call's result, so a token outlives its
	// call; progressOrder bounds them).
	progress      map[any]*sdk.ServerSession
	progressOrder []any
	// said is what unguarded last said of each tool.
	said map[string]string
	// warnNoTask says once that, without a task, the generic guard is off.
	warnNoTask sync.Once
	// serving is set once the agent-facing server exists: upstream's
	// notifications before that (during the handshake) have no one to go
	// to, and the first tool listing follows them.
	serving atomic.Bool
}

// unguarded says, once per tool and reason, why a tool ghonce guards by
// name is not guarded by its kind.
func (p *Proxy) unguarded(name, why string) {
	p.mu.Lock()
	said := p.said[name] == why
	if p.said == nil {
		p.said = map[string]string{}
	}
	p.said[name] = why
	p.mu.Unlock()
	if !said {
		p.s.cfg.Logf("%s", why)
	}
}

// maxProgress is how many calls' progress tokens the proxy remembers.
const maxProgress = 1024

func (p *Proxy) trackProgress(tok any, ss *sdk.ServerSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.progress[tok]; !ok {
		p.progressOrder = append(p.progressOrder, tok)
	}
	p.progress[tok] = ss
	if len(p.progressOrder) > maxProgress {
		delete(p.progress, p.progressOrder[0])
		p.progressOrder = p.progressOrder[1:]
	}
}

// NewProxy starts the upstream, completes MCP's handshake with it and
// lists its tools. An upstream that is not found, exits at once or does
// not speak MCP within up.StartTimeout is an *UpstreamError. Close stops
// the child.
func NewProxy(ctx context.Context, cfg Config, up Upstream) (*Proxy, error) {
	if cfg.Engine == nil || cfg.Off == nil || cfg.Ledger == nil {
		return nil, errors.New("new mcp proxy: both engines and the ledger are required")
	}
	cfg.defaults()
	p := &Proxy{s: &Server{cfg: cfg}, progress: map[any]*sdk.ServerSession{}}
	client := sdk.NewClient(&sdk.Implementation{Name: "ghonce", Version: cfg.Version}, &sdk.ClientOptions{
		Capabilities:   &sdk.ClientCapabilities{},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			if !p.serving.Load() {
				return
			}
			// Not in the handler: listing is a request to the session
			// whose notification this is.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := p.syncTools(ctx); err != nil {
					cfg.Logf("upstream's tools changed: %v", err)
				}
			}()
		},
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { p.listChanged(promptsChanged) },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { p.listChanged(resourcesChanged) },
		ResourceUpdatedHandler: func(ctx context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			if p.serving.Load() {
				_ = p.s.srv.ResourceUpdated(ctx, r.Params)
			}
		},
		LoggingMessageHandler: func(ctx context.Context, r *sdk.LoggingMessageRequest) {
			if !p.serving.Load() {
				return
			}
			for ss := range p.s.srv.Sessions() {
				_ = ss.Log(ctx, r.Params)
			}
		},
		ProgressNotificationHandler: func(ctx context.Context, r *sdk.ProgressNotificationClientRequest) {
			p.mu.Lock()
			ss := p.progress[r.Params.ProgressToken]
			p.mu.Unlock()
			if ss != nil {
				_ = ss.NotifyProgress(ctx, r.Params)
			}
		},
	})
	p.up = newChild(up, client, cfg.Logf)
	p.up.onRestart = func(ctx context.Context) {
		if err := p.syncTools(ctx); err != nil {
			cfg.Logf("after the upstream's restart: %v", err)
		}
	}
	if err := p.up.start(ctx); err != nil {
		return nil, err
	}
	cs, err := p.up.session(ctx)
	if err != nil {
		return nil, err
	}
	init := cs.InitializeResult()
	if init.Capabilities != nil {
		p.upCaps = init.Capabilities
	} else {
		p.upCaps = &sdk.ServerCapabilities{}
	}
	caps := *p.upCaps
	caps.Tools = &sdk.ToolCapabilities{ListChanged: true}
	instr := modelSays("instructions, behind --upstream")
	if init.Instructions != "" {
		instr = init.Instructions + "\n\n" + modelSays("instructions, behind --upstream")
	}
	opts := &sdk.ServerOptions{Instructions: instr, Capabilities: &caps}
	if caps.Completions != nil {
		opts.CompletionHandler = func(ctx context.Context, r *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			cs, err := p.up.session(ctx)
			if err != nil {
				return nil, err
			}
			return cs.Complete(ctx, r.Params)
		}
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		opts.SubscribeHandler = func(ctx context.Context, r *sdk.SubscribeRequest) error {
			cs, err := p.up.session(ctx)
			if err != nil {
				return err
			}
			return cs.Subscribe(ctx, r.Params)
		}
		opts.UnsubscribeHandler = func(ctx context.Context, r *sdk.UnsubscribeRequest) error {
			cs, err := p.up.session(ctx)
			if err != nil {
				return err
			}
			return cs.Unsubscribe(ctx, r.Params)
		}
	}
	name := "ghonce"
	if init.ServerInfo != nil && init.ServerInfo.Name != "" {
		name = "ghonce+" + init.ServerInfo.Name
	}
	p.s.srv = sdk.NewServer(&sdk.Implementation{Name: name, Title: "ghonce in front of " + upName(init), Version: cfg.Version}, opts)
	p.s.srv.AddReceivingMiddleware(p.s.traceCalls, p.middleware)
	p.s.observeGauges()
	p.serving.Store(true)
	if err := p.syncTools(ctx); err != nil {
		_ = p.up.close()
		return nil, fmt.Errorf("new mcp proxy: %w", err)
	}
	if msg := p.missingGuards(upName(init)); msg != "" {
		cfg.Logf("%s", msg)
	}
	return p, nil
}

// missingGuards says which kinds ghonce guards the upstream lists no tool
// for, or "" when it lists one for each: an upstream of another version
// (or with those toolsets off) whose writes of that kind, under another
// name, are kept to once per identical arguments, not once per (task,
// step).
func (p *Proxy) missingGuards(upstream string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var missing []string
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		if len(f.MCP) > 0 && !slices.ContainsFunc(f.MCP, func(n string) bool { return containsTool(p.tools, n) }) {
			missing = append(missing, fmt.Sprintf("%s (%s)", kind, strings.Join(f.MCP, ", ")))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("upstream %s lists none of the tools ghonce guards for the kinds %s: such writes under other names happen once per identical arguments, not per (task, step); "+checkUpstream,
		upstream, strings.Join(missing, "; "))
}

// checkUpstream is what to do when the upstream lacks a tool or argument
// ghonce guards.
const checkUpstream = "check the upstream's version and toolsets (--toolsets): ghonce guards github-mcp-server's tools by name (v1.9.0's)"

func upName(init *sdk.InitializeResult) string {
	if init.ServerInfo == nil || init.ServerInfo.Name == "" {
		return "its upstream"
	}
	return init.ServerInfo.Name
}

// Close stops the upstream.
func (p *Proxy) Close() error { return p.up.close() }

// ServeIO serves one client over r and w, as Server.ServeIO.
func (p *Proxy) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	return p.s.ServeIO(ctx, r, w)
}

// ServeHTTP serves the Streamable HTTP transport on l, as Server.ServeHTTP.
func (p *Proxy) ServeHTTP(ctx context.Context, l net.Listener, o HTTPOptions) error {
	return p.s.ServeHTTP(ctx, l, o)
}

// SDK returns the agent-facing SDK server, to connect to any transport.
func (p *Proxy) SDK() *sdk.Server { return p.s.srv }

// syncTools lists upstream's tools and serves them: guarded ones through
// the engine, the others forwarded.
func (p *Proxy) syncTools(ctx context.Context) error {
	cs, err := p.up.session(ctx)
	if err != nil {
		return err
	}
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list upstream's tools: %w", err)
		}
		tools = append(tools, t)
	}
	served := make([]*sdk.Tool, 0, len(tools))
	handlers := make([]sdk.ToolHandler, 0, len(tools))
	for _, t := range tools {
		if g, ok := guards[t.Name]; ok {
			lacks := g.lacks(argNames(t))
			if len(lacks) == 0 {
				gt, err := guardedTool(t, true)
				if err != nil {
					return err
				}
				served = append(served, gt)
				handlers = append(handlers, p.guardedHandler(g, argNames(gt)))
				continue
			}
			p.unguarded(t.Name, fmt.Sprintf("upstream's %s has no argument %s, which ghonce needs (once per task and step): it goes through the generic guard instead (once per same arguments); "+checkUpstream,
				t.Name, strings.Join(lacks, ", ")))
		}
		served = append(served, t)
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			handlers = append(handlers, p.forward)
		} else {
			handlers = append(handlers, p.genericHandler(t))
		}
	}
	p.mu.Lock()
	old := p.tools
	p.tools = served
	p.mu.Unlock()
	var gone []string
	for _, t := range old {
		if !containsTool(served, t.Name) {
			gone = append(gone, t.Name)
		}
	}
	if len(gone) > 0 {
		p.s.srv.RemoveTools(gone...)
	}
	for i, t := range served {
		p.s.srv.AddTool(t, handlers[i])
	}
	return nil
}

func containsTool(ts []*sdk.Tool, name string) bool {
	return slices.ContainsFunc(ts, func(t *sdk.Tool) bool { return t.Name == name })
}

func (p *Proxy) guardedHandler(g guard, takes map[string]bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if res, ok := p.s.serveGuarded(ctx, g, takes, req, true); ok {
			return res, nil
		}
		return p.forward(ctx, req)
	}
}

// forward sends a call upstream as it came (arguments byte for byte,
// _meta, the progress token) and returns upstream's result as it came;
// the agent's cancellation cancels it upstream. A read-only tool whose
// upstream died during the call is sent again to the restarted one; any
// other is not (it may have happened): the agent gets a tool error.
func (p *Proxy) forward(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	params := p.params(req)
	cs, err := p.up.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, params)
	if !lost(ctx, err) {
		return res, err
	}
	if !p.readOnly(req.Params.Name) {
		return errorResult(fmt.Errorf("unconfirmed: the upstream exited during the call to %s, which may or may not have happened; ghonce restarts it. Check before calling %s again", req.Params.Name, req.Params.Name)), nil
	}
	if cs, err = p.up.sessionOtherThan(ctx, cs); err != nil {
		return nil, err
	}
	return cs.CallTool(ctx, params)
}

// params is the upstream request of the agent's call: its name,
// arguments byte for byte, _meta (the progress token, remembered for
// upstream's progress notifications) and a continuation's answers.
func (p *Proxy) params(req *sdk.CallToolRequest) *sdk.CallToolParams {
	params := &sdk.CallToolParams{Meta: req.Params.Meta, Name: req.Params.Name,
		InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState}
	if len(req.Params.Arguments) > 0 {
		params.Arguments = req.Params.Arguments
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		p.trackProgress(tok, req.Session)
	}
	return params
}

// lost reports an error of a call whose answer never came: not upstream's
// own error response, nor the agent's cancellation.
func lost(ctx context.Context, err error) bool {
	var wire *jsonrpc.Error
	return err != nil && ctx.Err() == nil && !errors.As(err, &wire)
}

// readOnly reports whether upstream marks the tool readOnlyHint.
func (p *Proxy) readOnly(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.tools {
		if t.Name == name {
			return t.Annotations != nil && t.Annotations.ReadOnlyHint
		}
	}
	return false
}

// middleware answers the list methods with upstream's lists (tools/list:
// the proxy's, in upstream's order) and forwards prompts, resources and
// the logging level upstream.
func (p *Proxy) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list":
			p.mu.Lock()
			tools := append([]*sdk.Tool{}, p.tools...)
			p.mu.Unlock()
			return &sdk.ListToolsResult{Tools: tools}, nil
		case "prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read", "logging/setLevel":
		default:
			return next(ctx, method, req)
		}
		cs, err := p.up.session(ctx)
		if err != nil {
			return nil, err
		}
		switch params := req.GetParams().(type) {
		case *sdk.ListPromptsParams:
			return cs.ListPrompts(ctx, params)
		case *sdk.GetPromptParams:
			return cs.GetPrompt(ctx, params)
		case *sdk.ListResourcesParams:
			return cs.ListResources(ctx, params)
		case *sdk.ListResourceTemplatesParams:
			return cs.ListResourceTemplates(ctx, params)
		case *sdk.ReadResourceParams:
			return cs.ReadResource(ctx, params)
		case *sdk.SetLoggingLevelParams:
			if err := cs.SetLoggingLevel(ctx, params); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

type listKind int

const (
	promptsChanged listKind = iota
	resourcesChanged
)

// listChanged tells the agent's sessions that upstream's prompts or
// resources changed. The SDK sends list_changed when a feature is added
// or removed; the lists themselves are upstream's (middleware), so adding
// and removing a placeholder no client can see is the notification.
func (p *Proxy) listChanged(k listKind) {
	if !p.serving.Load() {
		return
	}
	const placeholder = "ghonce-list-changed"
	switch k {
	case promptsChanged:
		p.s.srv.AddPrompt(&sdk.Prompt{Name: placeholder}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return nil, errors.New("no such prompt")
		})
		p.s.srv.RemovePrompts(placeholder)
	case resourcesChanged:
		p.s.srv.AddResource(&sdk.Resource{Name: placeholder, URI: "ghonce:list-changed"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, errors.New("no such resource")
		})
		p.s.srv.RemoveResources("ghonce:list-changed")
	}
}
