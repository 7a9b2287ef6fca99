package github

// Meta values: one ref each under NAMESPACE/meta/, pointing at a commit
// whose message holds the name and the value.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
)

type metaDoc struct {
	V     int    `json:"ghonce_meta"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

func metaMessage(name, value string) string {
	b, err := json.Marshal(metaDoc{V: version, Name: name, Value: value})
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("ghonce ledger meta: %s\n\n%s\n", name, b)
}

func (l *Ledger) readMeta(ctx context.Context, name string) (sha, value string, err error) {
	sha, _, err = l.c.ReadRef(ctx, l.repo, l.metaRef(name))
	if err != nil || sha == "" {
		return "", "", l.explainNil("read the ledger", err)
	}
	cm, err := l.c.GetGitCommit(ctx, l.repo, sha)
	if err != nil {
		return "", "", l.explain("read the ledger", err)
	}
	_, body, _ := strings.Cut(cm.Message, "\n\n")
	var d metaDoc
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &d); err != nil || d.V == 0 || d.Name != name {
		return "", "", fmt.Errorf("read meta %s of %s: %w: its commit is not a ghonce meta value", name, l.repo, ledger.ErrNotLedger)
	}
	return sha, d.Value, nil
}

func (l *Ledger) explainNil(what string, err error) error {
	if err == nil {
		return nil
	}
	return l.explain(what, err)
}

// GetMeta implements ledger.Ledger.
func (l *Ledger) GetMeta(ctx context.Context, name string) (string, error) {
	sha, v, err := l.readMeta(ctx, name)
	if err != nil {
		return "", err
	}
	if sha == "" {
		return "", ledger.ErrNotFound
	}
	return v, nil
}

// PutMeta implements ledger.Ledger: ifAbsent creates the ref (GitHub's
// create-if-absent decides between concurrent writers); otherwise the new
// value is a commit over the old one, moved as a fast forward.
func (l *Ledger) PutMeta(ctx context.Context, name, value string, ifAbsent bool) (bool, error) {
	if err := ledger.ValidateMetaName(name); err != nil {
		return false, err
	}
	ref := l.metaRef(name)
	for range maxTries {
		parent := ""
		if !ifAbsent {
			sha, _, err := l.readMeta(ctx, name)
			if err != nil && !errors.Is(err, ledger.ErrNotLedger) {
				return false, err
			}
			parent = sha
		}
		cm, err := l.c.CreateGitCommit(ctx, l.repo, metaMessage(name, value), nonEmpty(parent))
		if err != nil {
			return false, l.explain("write the ledger", err)
		}
		if parent == "" {
			err = l.c.CreateRefAt(ctx, l.repo, ref, cm.SHA)
		} else {
			err = l.c.MoveRef(ctx, l.repo, ref, cm.SHA)
		}
		var ce *ghcheck.CreateError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &ce) && ce.Class == ghcheck.ClassExists:
			if ifAbsent {
				return false, nil
			}
			continue
		case errors.Is(err, ghcheck.ErrNotFastForward):
			continue
		case errors.As(err, &ce) && (ce.Class == ghcheck.ClassMaybe || ce.Class == ghcheck.ClassNotSent):
			at, _, rerr := l.c.ReadRef(ctx, l.repo, ref)
			if rerr != nil {
				return false, fmt.Errorf("%w: write meta %s in %s: %w; and reading it back failed: %w", ledger.ErrUnavailable, name, l.repo, err, rerr)
			}
			if at == cm.SHA {
				return true, nil
			}
			if ifAbsent && at != "" {
				return false, nil
			}
			continue
		default:
			return false, l.explain("write the ledger", err)
		}
	}
	return false, l.tooBusy("write meta", name)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
