package once

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// Identity is an action's identity, cleaned: the ledger keeps the task and
// step the key was derived from, so " T-1" and "T-1\n" are recorded,
// listed and filtered as T-1. Its error is an *effect.InvalidError.
func Identity(task, step, kind, repo, target string) (taskkey.Identity, error) {
	id := taskkey.Identity{Task: task, Step: step, Kind: kind, Repo: repo, Target: target}.Clean()
	if err := id.Validate(); err != nil {
		return taskkey.Identity{}, Invalid(err)
	}
	return id, nil
}

// Key is the key of an action's identity (Identity), with its repository,
// when it names one, checked as OWNER/NAME. Its error is an
// *effect.InvalidError.
func Key(task, step, kind, repo, target string) (taskkey.Identity, string, error) {
	id, err := Identity(task, step, kind, repo, target)
	if err != nil {
		return taskkey.Identity{}, "", err
	}
	if repo != "" {
		if _, err := ghcheck.ParseRepo(repo); err != nil {
			return taskkey.Identity{}, "", Invalid(err)
		}
	}
	return id, taskkey.Key(id), nil
}

// NoSpec is the error of an action without a description.
var NoSpec error = &effect.InvalidError{Err: errors.New("validate action: no spec")}

// Invalid is err as an *effect.InvalidError: as it is when it is one
// already.
func Invalid(err error) error {
	var inv *effect.InvalidError
	if errors.As(err, &inv) {
		return err
	}
	return &effect.InvalidError{Err: err}
}

// Encode is a description as the ledger stores it (its payload), and the
// payload's hash.
func Encode(kind string, spec any) ([]byte, string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, "", fmt.Errorf("encode %s payload: %w", kind, err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}
