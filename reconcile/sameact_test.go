package reconcile

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// actsCorpus is testdata/acts.json: pairs of texts sent under one key.
type actsCorpus struct {
	Pairs []struct {
		Want          string `json:"want"` // "retry" or "two-acts"
		Kind, Why     string
		First, Second struct {
			Title *string `json:"title,omitempty"`
			Body  string  `json:"body"`
		}
	} `json:"pairs"`
}

// TestSameActCorpus holds OnChangeAuto's rule to the corpus: it prints the
// confusion matrix, and fails on any pair of two acts judged a retry (the
// second act would be answered with the first one's URL as success). A
// retry judged a second act costs an error that names the first artifact
// and the step to use; it is counted, not failed.
func TestSameActCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/acts.json")
	if err != nil {
		t.Fatal(err)
	}
	var c actsCorpus
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	var m [2][2]int // [want two-acts][judged different]
	var missed []string
	for _, p := range c.Pairs {
		first, _ := json.Marshal(p.First)
		second, _ := json.Marshal(p.Second)
		why := differentAct(first, second, false)
		two := p.Want == "two-acts"
		if !two && p.Want != "retry" {
			t.Fatalf("pair %q: want %q, not retry or two-acts", p.Why, p.Want)
		}
		m[b2i(two)][b2i(why != "")]++
		switch {
		case two && why == "":
			t.Errorf("two acts judged a retry (%s, %s): %s -> %s: the second would get the first's URL as success", p.Kind, p.Why, text(p.First.Title, p.First.Body), text(p.Second.Title, p.Second.Body))
		case !two && why != "":
			missed = append(missed, fmt.Sprintf("%s (%s): %s", p.Kind, p.Why, why))
		}
	}
	t.Logf("confusion matrix over %d pairs (rows: what the pair is; columns: what the rule says)\n"+
		"                 retry  different\n"+
		"  retry          %5d  %9d\n"+
		"  two acts       %5d  %9d", len(c.Pairs), m[0][0], m[0][1], m[1][0], m[1][1])
	if len(missed) > 0 {
		t.Logf("retries judged a second act (an error naming the first artifact, no duplicate):\n  %s", strings.Join(missed, "\n  "))
	}
	if m[0][0]+m[0][1] < 20 || m[1][0]+m[1][1] < 15 {
		t.Errorf("corpus too small: %d retries, %d two-acts pairs", m[0][0]+m[0][1], m[1][0]+m[1][1])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func text(title *string, body string) string {
	if title != nil {
		return fmt.Sprintf("%q", *title)
	}
	return fmt.Sprintf("%q", body)
}

// TestSameActHeard: once the session was told of the first artifact, any
// change of its content words is a second act, even one the text rule
// calls a retry; "(retry)", case and punctuation are not.
func TestSameActHeard(t *testing.T) {
	a := []byte(`{"title":"Fix the flaky test","body":""}`)
	for _, tc := range []struct {
		title     string
		different bool
	}{
		{"Fix the flaky test in auth", true},
		{"Fix flaky tests", false},
		{"Fix the flaky test (retry)", false},
		{"fix the flaky test.", false},
	} {
		b, _ := json.Marshal(map[string]string{"title": tc.title, "body": "other"})
		if why := differentAct(a, b, true); (why != "") != tc.different {
			t.Errorf("heard, %q after %q: another act %v (%s), want %v", tc.title, "Fix the flaky test", why != "", why, tc.different)
		}
	}
	if why := differentAct(a, []byte(`{"title":"Fix the flaky test in auth","body":""}`), false); why != "" {
		t.Errorf("not heard, an elaboration: judged another act: %s", why)
	}
}
