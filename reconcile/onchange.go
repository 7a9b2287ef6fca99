package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// What a run does when its key is already done (or found) but its
// description differs from the one the ledger stored: another --head, a
// reworded title or body (Action.OnChange).
const (
	// OnChangeWarn: keep the artifact as it is, report the
	// changed fields in Result.Changed and say so in Result.Warning.
	OnChangeWarn = "warn"
	// OnChangeFail: keep the artifact as it is and return a
	// *ChangedError (exit 1), so a runner notices.
	OnChangeFail = "fail"
	// OnChangeUpdate: edit the artifact to this run's description where
	// its kind allows (a PR's or issue's title and body, a comment's body),
	// and store this run's description. What cannot be edited (a PR's head
	// branch) is kept, and Result.Warning says so.
	OnChangeUpdate = "update"
)

func checkOnChange(v string) error {
	switch v {
	case "", OnChangeWarn, OnChangeFail, OnChangeUpdate, OnChangeAuto:
		return nil
	}
	return &InvalidError{Field: "on_change", Problem: fmt.Sprintf("%q is not a policy", v), Want: "auto, warn, fail or update"}
}

// ChangedError: the key is done, and this run's description differs from
// the stored one in Changed; with OnChangeFail nothing was changed. Exit 1.
type ChangedError struct {
	Key     string
	Changed []string
	Result  *outcome.Result // the done result, pointing at the artifact
}

// Error says it with the fields of an Action (effect.GoWords); a front
// says it with its own flags or settings (In).
func (e *ChangedError) Error() string { return e.In(effect.GoWords{}) }

// In is Error with the remedies, a step and an on-change policy, in w.
func (e *ChangedError) In(w effect.Words) string {
	step, policy := w.Name(effect.Option{Name: "step"}), func(p string) string { return w.Name(effect.Option{Name: "on-change", Value: p}) }
	return fmt.Sprintf("%s is done (%s), but this run's %s from what made it; nothing was changed: "+
		"use another %s for a new %s, %s to edit it, or %s to go on",
		e.Key, describeResult(e.Result), once.Differ(e.Changed), step, e.Result.Kind, policy(OnChangeUpdate), policy(OnChangeWarn))
}

func describeResult(r *outcome.Result) string {
	switch {
	case r.URL != "":
		return r.URL
	case r.Number != 0:
		return fmt.Sprintf("%s #%d", r.Kind, r.Number)
	case r.SHA != "":
		return fmt.Sprintf("%s at %.12s", r.Kind, r.SHA)
	}
	return r.Kind
}

// onChange applies the action's OnChange to r, the done result of entry
// (skipped, or found after claim c), when this run's payload differs from
// the stored one.
func (e *Engine) onChange(ctx context.Context, p *Prepared, c *ledger.Claim, entry *ledger.Entry, r *outcome.Result) (*outcome.Result, error) {
	a, payload, hash := p.a, p.payload, p.hash
	changed, fields := once.Changed(entry, payload, hash)
	if !changed {
		return r, nil
	}
	r.PayloadChanged = true
	r.Changed = fields
	var same string
	switch a.OnChange {
	case OnChangeFail:
		return nil, &ChangedError{Key: r.Key, Changed: r.Changed, Result: r}
	case OnChangeUpdate:
		return e.update(ctx, a, entry, payload, hash, r)
	case OnChangeAuto, "":
		var err error
		if same, err = e.sameAct(ctx, p, c, entry, r); err != nil {
			return nil, err
		}
	}
	// Result.Warning reaches the user (stderr, --json); no log line too.
	// What to do about it is the front end's to say: only it knows
	// whether its caller can ask for OnChangeUpdate.
	r.Warning = joinWarnings(r.Warning, fmt.Sprintf("this run's %s from what made %s, which was left as it is%s", once.Differ(r.Changed), describeResult(r), same))
	return r, nil
}

// sameAct applies OnChangeAuto to r, whose entry's text may differ from
// this run's: why this run is the same act (" (…)", "" when its text is
// the same), or a *SameOrAnotherError.
func (e *Engine) sameAct(ctx context.Context, p *Prepared, c *ledger.Claim, entry *ledger.Entry, r *outcome.Result) (string, error) {
	if _, ok := p.a.Spec.(targetIsAct); ok {
		return "", nil
	}
	old, field, ok := actText(entry.Payload)
	cur, _, ok2 := actText(p.payload)
	if !ok || !ok2 || normalText(old) == normalText(cur) {
		return "", nil
	}
	made := entry.UpdatedAt // when the ledger recorded it done
	if r.Outcome == outcome.Found {
		made = time.Time{}
		if r.FoundArtifact != nil {
			made = r.FoundArtifact.Created
		}
	}
	if why := e.retryOf(ctx, p, c, entry, made); why != "" {
		return " (the same act: " + why + ")", nil
	}
	if field == "body" {
		old, cur = opening(old), opening(cur)
	}
	return "", &SameOrAnotherError{Key: r.Key, Result: r, Field: field, Existing: old, Text: cur, Made: made, NewStep: newStep(r.Step, p.payload)}
}

func (e *Engine) update(ctx context.Context, a Action, entry *ledger.Entry, payload []byte, hash string, r *outcome.Result) (*outcome.Result, error) {
	cannot := func() (*outcome.Result, error) {
		r.Warning = joinWarnings(r.Warning, fmt.Sprintf("this run's %s, and a %s cannot be edited: it was left as it is", once.Differ(r.Changed), r.Kind))
		return r, nil
	}
	up, ok := a.Spec.(Updatable)
	if !ok {
		return cannot()
	}
	env := e.env(a.repo, entry.Status)
	art := effect.Artifact{Number: r.Number, ID: r.ID, URL: r.URL, SHA: r.SHA, Text: r.Ref}
	got, kept, err := up.Update(ctx, env, r.Key, art, r.Changed)
	if errors.Is(err, errLacks) {
		return cannot()
	}
	if err != nil {
		return nil, fmt.Errorf("update %s: %w (the entry stays done and points at it)", describeResult(r), err)
	}
	// Store this run's description, so the next identical run skips
	// without editing again. The entry is done under the fence that made
	// it; a newer attempt would have a newer fence.
	edited := slices.DeleteFunc(slices.Clone(r.Changed), func(f string) bool { return slices.Contains(kept, f) })
	if len(edited) == 0 {
		// Nothing it could edit: the stored description stays the one
		// that matches the artifact, and the warning comes each time.
		r.Warning = joinWarnings(r.Warning, fmt.Sprintf("this run's %s, and the %s of an existing %s cannot be changed: it was left as it is (use another step for a new one)", once.Differ(r.Changed), strings.Join(kept, " and "), r.Kind))
		return r, nil
	}
	if err := e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: r.Key, Fence: entry.Fence, Payload: payload, PayloadHash: hash, Why: "updated the artifact to this run's description: " + strings.Join(edited, ", "), Done: true}); err != nil && !errors.Is(err, ledger.ErrFenced) {
		return nil, err
	}
	r.Updated = true
	if got.URL != "" {
		r.URL = got.URL
	}
	e.cfg.Logf("%s: updated the %s of %s to this run's", r.Key, strings.Join(edited, " and "), describeResult(r))
	if len(kept) > 0 {
		r.Warning = joinWarnings(r.Warning, fmt.Sprintf("the %s of an existing %s cannot be changed; it keeps its %s (use another step for a new one)", strings.Join(kept, " and "), r.Kind, strings.Join(kept, " and ")))
	}
	return r, nil
}

// joinWarnings joins two warnings, either of which may be empty.
func joinWarnings(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// notTitleOrBody returns the changed fields that an edit of title and body
// leaves as they were (a PR's head, draft, labels).
func notTitleOrBody(changed []string) []string {
	var kept []string
	for _, f := range changed {
		if f != "title" && f != "body" {
			kept = append(kept, f)
		}
	}
	return kept
}
