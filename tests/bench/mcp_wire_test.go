package bench

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/tests/harness"
)

// The MCP servers a create is measured through, in the order of the
// report's columns.
const (
	viaAlone    = "github-mcp-server"     // github-mcp-server v1.9.0 alone: no guard
	viaProxy    = "ghonce mcp --upstream" // ghonce in front of it
	viaStandard = "ghonce mcp"            // ghonce's own MCP server
)

// mcpSkipNote begins what the section says when it cannot run.
const mcpSkipNote = "### Through MCP\n\nNot measured"

var mcpVias = []string{viaAlone, viaProxy, viaStandard}

// mcpCall is one measured tools/call: its requests and content-creating
// requests (those a server sends after answering, a pull request's labels,
// included), and its round trips one after another among the requests
// answered before the call was.
type mcpCall struct {
	requests, writes, trips int
	took                    time.Duration
}

// mcpRow is one kind at one latency, per server.
type mcpRow map[string][]mcpCall

// mcpWireReport measures what a first create costs through MCP: the same
// create sent as a tools/call over stdio to github-mcp-server v1.9.0 alone
// (what an unguarded agent sends), to `ghonce mcp --upstream --
// github-mcp-server stdio` (the guard in front of it) and to `ghonce mcp`
// alone, each server started once and initialized before anything is
// timed, on one fake GitHub with a fixed latency added to every request.
// Only the tools/call round trip is timed; the three are called in turn
// (the order rotating by round) in the same run. It returns the
// section's markdown; where github-mcp-server or port 80 is missing it
// says so instead.
func mcpWireReport(t *testing.T, bin string) string {
	ghmcp, err := harness.GitHubMCPServer()
	if err != nil {
		t.Logf("on the wire, MCP: %v", err)
		return fmt.Sprintf("%s in this run: %v.\n", mcpSkipNote, err)
	}
	l, host, err := harness.Loopback80()
	if err != nil {
		t.Logf("on the wire, MCP: %v", err)
		return fmt.Sprintf("%s in this run: %v.\n", mcpSkipNote, err)
	}
	w := newGWorldOn(t, l)
	s := w.GitHub
	env := append(w.Env(), "GH_REPO="+gRepo,
		"GITHUB_HOST=http://"+host, "GITHUB_PERSONAL_ACCESS_TOKEN="+gToken, "GHONCE_LEDGER="+w.Ledger)
	// The ledger as an established one is: made ahead, the login cached.
	initCmd := exec.Command(bin, "init")
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("ghonce init: %v\n%s", err, out)
	}
	sessions := map[string]*sdk.ClientSession{}
	for via, args := range map[string][]string{
		viaAlone:    {ghmcp, "stdio"},
		viaProxy:    {bin, "mcp", "--upstream", "--", ghmcp, "stdio"},
		viaStandard: {bin, "mcp"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = env
		stderr := &harness.SyncBuffer{}
		cmd.Stderr = stderr
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "ghonce-bench", Version: "1"}, nil).
			Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
		cancel()
		if err != nil {
			t.Fatalf("start %s: %v\nstderr: %s", via, err, stderr)
		}
		t.Cleanup(func() { _ = cs.Close() })
		sessions[via] = cs
	}

	n := 0
	// args is kind's create as via takes it, on a branch of its own; a
	// kind with no arguments here is not measured, and its rows say why.
	args := func(via, kind, task string) (tool string, a map[string]any, why string) {
		n++
		head := fmt.Sprintf("mcp-%d", n)
		s.SetRef(gOwner, gName, head, s.AddCommit(gOwner, gName, "main"))
		a = map[string]any{"owner": gOwner, "repo": gName}
		if via != viaAlone {
			a["task"] = task
		}
		switch kind {
		case "pr":
			a["title"], a["body"], a["head"], a["base"] = "t", "b", head, "main"
			return "create_pull_request", a, ""
		case "issue":
			a["title"], a["body"] = "t", "b"
			if via == viaStandard {
				return "create_issue", a, ""
			}
			a["method"] = "create"
			return "issue_write", a, ""
		case "comment":
			a["issue_number"], a["body"] = w.thread, "b"
			return "add_issue_comment", a, ""
		case "branch":
			a["branch"], a["from_branch"] = "b"+head, "main"
			return "create_branch", a, ""
		case "file":
			a["path"], a["content"], a["message"], a["branch"] = head+".txt", "x\n", "m", "main"
			return "create_or_update_file", a, ""
		}
		f, _ := kinds.FaceOf(kind)
		for _, fl := range f.Fields {
			if v := fieldsOf(w.spec(kind, 0))[fl.Name]; fl.MCPArg() == "" && v != nil && v != "" && v != float64(0) {
				return "", nil, fmt.Sprintf("%s does not take %s, which the other sections' %s sets", strings.Join(f.MCP, ", "), fl.Name, kind)
			}
		}
		return "", nil, fmt.Sprintf("tests/bench's MCP section has no arguments for %s", strings.Join(f.MCP, ", "))
	}
	// mcpKinds are the kinds measured here: those whose Face names an MCP
	// tool and whose arguments args gives; unmeasured says why not.
	var mcpKinds []string
	unmeasured := map[string]string{}
	for _, k := range reportKinds {
		if f, _ := kinds.FaceOf(k); len(f.MCP) == 0 {
			continue
		}
		if _, _, why := args(viaStandard, k, "PROBE"); why != "" {
			unmeasured[k] = why
		} else {
			mcpKinds = append(mcpKinds, k)
		}
	}
	call := func(via, kind, task string) mcpCall {
		tool, a, _ := args(via, kind, task)
		var labelled chan struct{}
		if via != viaAlone && kind == "pr" {
			labelled = make(chan struct{})
			var once sync.Once
			s.BeforeWrite(func(pw *fixtures.PendingWrite) bool {
				if strings.HasSuffix(pw.Path, "/labels") {
					once.Do(func() { close(labelled) })
				}
				return true
			})
		}
		s.WaitIdle()
		before := len(s.Requests())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		res, err := sessions[via].CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: a})
		took := time.Since(start)
		answered := start.Add(took)
		if err != nil {
			t.Fatalf("%s %s: %v", via, tool, err)
		}
		if res.IsError {
			t.Fatalf("%s %s: tool error: %s", via, tool, toolText(res))
		}
		if labelled != nil && strings.HasPrefix(toolText(res), "created") {
			// ghonce answers a pull request it created before labelling
			// it: wait for the labels, so that they are this call's, not
			// the next one's.
			select {
			case <-labelled:
			case <-time.After(time.Minute):
				t.Fatalf("%s %s: no labels within a minute of the answer", via, tool)
			}
		}
		s.BeforeWrite(nil)
		s.WaitIdle()
		reqs := s.Requests()[before:]
		var first []fixtures.Request
		for _, q := range reqs {
			if q.End.Before(answered) {
				first = append(first, q)
			}
		}
		return mcpCall{requests: len(reqs), writes: writes(reqs), trips: fixtures.RoundTrips(first), took: took}
	}
	// One create of each kind through each server first, untimed: what a
	// session's first call pays once (the ledger opened, connections made).
	for _, via := range mcpVias {
		for _, k := range mcpKinds {
			call(via, k, "MCP-WARM-"+k)
		}
	}

	latencies := []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond}
	rows := map[string]mcpRow{}
	for _, lat := range latencies {
		s.SetLatency(lat)
		for rep := range *wireReps {
			for _, k := range mcpKinds {
				row := rows[fmt.Sprint(k, lat)]
				if row == nil {
					row = mcpRow{}
					rows[fmt.Sprint(k, lat)] = row
				}
				for i := range mcpVias {
					via := mcpVias[(i+rep)%len(mcpVias)]
					row[via] = append(row[via], call(via, k, fmt.Sprintf("MCP-%s-%d-%s-%d", lat, rep, k, i)))
				}
			}
		}
	}
	s.SetLatency(0)

	var b strings.Builder
	fmt.Fprintf(&b, "### Through MCP\n\nThe same first creates as MCP tool calls over stdio, on the fake GitHub with a fixed latency added to every request: to github-mcp-server v1.9.0 alone (`github-mcp-server stdio`, no guard: what an agent's create costs without ghonce), to `ghonce mcp --upstream -- github-mcp-server stdio` (ghonce in front of it, the guard's create on a ledger `ghonce init` made) and to `ghonce mcp` alone. Each server is started and initialized once, and has made one create of each kind before anything is timed; only the `tools/call` round trip is timed, the three called in turn (the order rotating by round) in the same run; medians of %d. Requests and content-creating requests are counted on the fake per call, those a server sends after answering (a pull request's labels, which ghonce adds once it has answered) included; round trips are the longest chain of requests each sent after the one before was answered (`fixtures.RoundTrips`), among those answered before the call was: what the agent waits for, machine-independent (at 0 ms a request sent after the answer may be answered first, and counts). The branch is created from a ref (`from_branch`), which github-mcp-server resolves and creates in two round trips of its own. Targets at 100 ms: through `--upstream` within 2.2× github-mcp-server's own create, a branch from a ref within 1.1×.\n\n", *wireReps)
	b.WriteString("| kind | latency per request | requests (alone / `--upstream` / `ghonce mcp`) | content-creating | github-mcp-server | `--upstream` | round trips (alone / `--upstream`) | `--upstream` / alone | target | met | `ghonce mcp` | round trips | `ghonce mcp` / alone |\n| --- | --- | --- | --- | ---: | ---: | --- | ---: | --- | --- | ---: | --- | ---: |\n")
	for _, k := range reportKinds {
		if why := unmeasured[k]; why != "" {
			fmt.Fprintf(&b, "| %s | | not measured: %s | | | | | | | | | | |\n", k, why)
			continue
		}
		if !slices.Contains(mcpKinds, k) {
			continue // no MCP tool makes it
		}
		for _, lat := range latencies {
			row := rows[fmt.Sprint(k, lat)]
			med := map[string]time.Duration{}
			var reqs, wr, trips []string
			for _, via := range mcpVias {
				cs := row[via]
				var ds []time.Duration
				for _, c := range cs {
					ds = append(ds, c.took)
				}
				med[via] = medianDur(ds)
				last := cs[len(cs)-1]
				reqs, wr, trips = append(reqs, fmt.Sprint(last.requests)), append(wr, fmt.Sprint(last.writes)), append(trips, fmt.Sprint(last.trips))
			}
			proxy, standard := float64(med[viaProxy])/float64(med[viaAlone]), float64(med[viaStandard])/float64(med[viaAlone])
			target, met := wireTarget(mcpTargets, k, lat, proxy)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s / %s | %.2f× | %s | %s | %s | %s | %.2f× |\n", k, lat,
				strings.Join(reqs, " / "), strings.Join(wr, " / "),
				ms(med[viaAlone]), ms(med[viaProxy]), trips[0], trips[1], proxy, target, met, ms(med[viaStandard]), trips[2], standard)
			t.Logf("on the wire, MCP: %s at %s: requests %s, content-creating %s, round trips %s; alone %s, --upstream %s (%.2f×), ghonce mcp %s (%.2f×)",
				k, lat, strings.Join(reqs, "/"), strings.Join(wr, "/"), strings.Join(trips, "/"), med[viaAlone], med[viaProxy], proxy, med[viaStandard], standard)
		}
	}
	b.WriteString("\nWhere the time goes at 100 ms per request: each call's time is its round trips (each one request's latency and the fake's answer) and what the server does around them. Beyond its round trips, per call:")
	lat := 100 * time.Millisecond
	for _, k := range mcpKinds {
		row := rows[fmt.Sprint(k, lat)]
		var parts []string
		for _, via := range []string{viaAlone, viaProxy} {
			var ds []time.Duration
			for _, c := range row[via] {
				ds = append(ds, c.took-time.Duration(c.trips)*lat)
			}
			parts = append(parts, fmt.Sprintf("%s %s", via, ms(medianDur(ds))))
		}
		fmt.Fprintf(&b, " %s: %s;", k, strings.Join(parts, ", "))
	}
	b.WriteString(" the difference between the two is ghonce's own time per call; the rest of the ratio is the round trips ghonce adds (its look-up before the create; a branch's look-up runs beside the ref's resolution, and a pull request's labels follow the answer).\n")
	return b.String()
}

func toolText(res *sdk.CallToolResult) string {
	var txt []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt = append(txt, tc.Text)
		}
	}
	return strings.Join(txt, "\n")
}
