package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/observe"
)

// rules is ghonce-rules.yml as Prometheus reads it.
type rules struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Alert, Record, Expr, For string
		}
	}
}

func readRules(t *testing.T) rules {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("prometheus", "ghonce-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var r rules
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatalf("ghonce-rules.yml: %v", err)
	}
	return r
}

// dashboard is the part of the Grafana dashboard these tests read.
type dashboard struct {
	UID    string
	Panels []struct {
		Title      string
		Datasource struct{ UID string }
		Targets    []struct {
			Expr       string
			Datasource struct{ UID string }
		}
	}
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("grafana", "ghonce.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana/ghonce.json: %v", err)
	}
	return d
}

var metricName = regexp.MustCompile(`\bghonce_[a-z_]+`)

// exported maps each series name ghonce exports (a histogram's _bucket,
// _sum and _count) to its family's name.
func exported() map[string]string {
	out := map[string]string{}
	for _, f := range observe.Families() {
		out[f.Name] = f.Name
		if f.Type == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[f.Name+s] = f.Name
			}
		}
	}
	return out
}

// promtool is the path of Prometheus' promtool. Under CI=true it must be
// there (.ci/run installs Debian's prometheus package); elsewhere a test
// that needs it is skipped, saying so.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed: CI installs Debian's prometheus package (.ci/run); the alerting rules go untested without it")
		}
		t.Skip("SKIPPED: promtool is not installed (Debian: apt-get install prometheus); the alerting rules are not checked here")
	}
	return p
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The shipped alerting rules are valid (promtool check rules) and each
// fires on series that reproduce its incident, and only then (promtool
// test rules, prometheus/ghonce-rules.test.yml).
func TestAlertRules(t *testing.T) {
	p := promtool(t)
	t.Log(run(t, "prometheus", p, "check", "rules", "ghonce-rules.yml"))
	t.Log(run(t, "prometheus", p, "test", "rules", "ghonce-rules.test.yml"))
	// Every alert has a unit test.
	b, err := os.ReadFile(filepath.Join("prometheus", "ghonce-rules.test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !strings.Contains(string(b), "alertname: "+r.Alert+"\n") {
				t.Errorf("alert %s has no test in ghonce-rules.test.yml", r.Alert)
			}
		}
	}
}

// The rules and the dashboard name only metrics ghonce exports, and the
// dashboard shows every family (but the textfile's timestamp): a renamed
// metric fails here, not on an operator's empty panel.
func TestDashboardAndRulesNameExportedMetrics(t *testing.T) {
	names := exported()
	check := func(where, expr string) {
		for _, m := range metricName.FindAllString(expr, -1) {
			if _, ok := names[m]; !ok {
				t.Errorf("%s names %s, which ghonce does not export", where, m)
			}
		}
	}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			check("alert "+r.Alert, r.Expr)
		}
	}
	d := readDashboard(t)
	if d.UID == "" {
		t.Error("the dashboard has no uid: provisioning would make a new one each time")
	}
	shown := map[string]bool{}
	for _, p := range d.Panels {
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %q, want the ${datasource} variable", p.Title, p.Datasource.UID)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: %s does not filter by the $job variable", p.Title, tg.Expr)
			}
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				shown[names[m]] = true
			}
		}
	}
	for _, f := range observe.Families() {
		if !shown[f.Name] && f.Name != observe.LastRunTimestamp {
			t.Errorf("no panel shows %s", f.Name)
		}
	}
}

// Every dashboard query is PromQL Prometheus parses: each, with Grafana's
// variables given values, is checked as a recording rule by promtool.
func TestDashboardQueriesParse(t *testing.T) {
	p := promtool(t)
	vars := strings.NewReplacer("$__rate_interval", "1m", "$job", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, panel := range readDashboard(t).Panels {
		for _, tg := range panel.Targets {
			n++
			q, _ := json.Marshal(vars.Replace(tg.Expr)) // a JSON string is a YAML string
			fmt.Fprintf(&b, "      - record: ghonce:dashboard:%d\n        expr: %s\n", n, q)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard.yml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, dir, p, "check", "rules", "dashboard.yml")
	if want := fmt.Sprintf("%d rules found", n); !strings.Contains(out, want) {
		t.Fatalf("promtool: %s, want %q", out, want)
	}
}

// The service guide names every metric family and every shipped alert.
func TestServiceGuideNamesMetricsAndAlerts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "guide", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	var want []string
	for _, f := range observe.Families() {
		want = append(want, "`"+f.Name+"`")
	}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				want = append(want, "`"+r.Alert+"`")
			}
		}
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("docs/guide/service.md does not name %s", w)
		}
	}
	// Each alert's row says its figures as the rule has them: its for, its
	// ranges and its threshold.
	figure := regexp.MustCompile(`\[(\d+[smh])\]|> ([0-9.]+)$`)
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			i := strings.Index(page, "| `"+r.Alert+"` |")
			if r.Alert == "" || i < 0 {
				continue
			}
			row := page[i : i+strings.Index(page[i:], "\n")]
			figures := []string{r.For}
			if r.For == "" {
				figures = []string{"at once"}
			}
			for _, m := range figure.FindAllStringSubmatch(strings.TrimSpace(r.Expr), -1) {
				figures = append(figures, m[1]+m[2])
			}
			for _, f := range figures {
				if f != "0" && !strings.Contains(row, f) {
					t.Errorf("docs/guide/service.md: the row of %s does not say %q, as its rule does", r.Alert, f)
				}
			}
		}
	}
	if !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "Ghonce") }) {
		t.Fatal("no alert read from ghonce-rules.yml: the test reads the wrong file")
	}
}

// The service guide's Kubernetes fragment fits the server: its args are
// ghonce mcp's flags, the probes reach the port --http listens on,
// readiness (not liveness) is /healthz, and the pod's grace outlasts
// --shutdown-grace plus the preStop sleep.
func TestKubernetesSnippetFitsTheServer(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "guide", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, "```yaml\nterminationGracePeriodSeconds:")
	if i < 0 {
		t.Fatal("docs/guide/service.md has no Kubernetes fragment")
	}
	block := page[i+len("```yaml\n"):]
	block = block[:strings.Index(block, "```")]
	var pod struct {
		Grace      int `yaml:"terminationGracePeriodSeconds"`
		Containers []struct {
			Args  []string
			Ports []struct {
				Name          string
				ContainerPort int `yaml:"containerPort"`
			}
			Readiness struct {
				HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
			} `yaml:"readinessProbe"`
			Liveness  map[string]any `yaml:"livenessProbe"`
			Lifecycle struct {
				PreStop struct {
					Sleep struct{ Seconds int }
				} `yaml:"preStop"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(block), &pod); err != nil || len(pod.Containers) != 1 {
		t.Fatalf("the fragment: %v", err)
	}
	c := pod.Containers[0]
	ref, err := os.ReadFile(filepath.Join("..", "docs", "reference", "cli", "ghonce_mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{}
	for j, a := range c.Args {
		if strings.HasPrefix(a, "--") {
			if !strings.Contains(string(ref), "      "+a+" ") {
				t.Errorf("ghonce mcp has no flag %s", a)
			}
			if j+1 < len(c.Args) {
				flags[a] = c.Args[j+1]
			}
		}
	}
	if c.Args[0] != "mcp" || len(c.Ports) != 1 || !strings.HasSuffix(flags["--http"], fmt.Sprintf(":%d", c.Ports[0].ContainerPort)) {
		t.Errorf("args %v, ports %+v: want mcp listening on the container's port", c.Args, c.Ports)
	}
	if c.Readiness.HTTPGet.Path != "/healthz" || c.Readiness.HTTPGet.Port != c.Ports[0].Name {
		t.Errorf("readiness probe %+v, want /healthz on the port", c.Readiness)
	}
	if _, ok := c.Liveness["httpGet"]; ok {
		t.Error("liveness probes /healthz: a ledger outage would restart every pod")
	}
	grace, err := time.ParseDuration(flags["--shutdown-grace"])
	if err != nil || time.Duration(pod.Grace)*time.Second <= grace+time.Duration(c.Lifecycle.PreStop.Sleep.Seconds)*time.Second {
		t.Errorf("terminationGracePeriodSeconds %d, --shutdown-grace %q, preStop sleep %ds: want the pod's grace above both", pod.Grace, flags["--shutdown-grace"], c.Lifecycle.PreStop.Sleep.Seconds)
	}
}
