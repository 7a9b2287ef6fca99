package offgithub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
)

// ToolCall guards a call of an MCP tool ghonce has no kind for (`ghonce
// mcp --upstream`'s generic guard): at most once per (task, tool,
// arguments). The key's step is the tool and its target the hash of the
// arguments in canonical form, so the same call is the same key and any
// other argument makes a new one. Its artifact is the upstream's result,
// kept in the ledger (Result.Ref) and returned to a replay.
//
// Nothing can look a tool call's effect up, so, like a guarded command
// without --check, an attempt whose outcome was lost is never sent again
// until a person settles it (`ghonce resolve KEY --done` or `--retry`),
// unless the tool is idempotent (upstream's idempotentHint).
type ToolCall struct {
	Tool string `json:"tool"`
	// ArgsSHA256 is the hex SHA-256 of the arguments in canonical form; the
	// arguments themselves are not stored.
	ArgsSHA256 string `json:"args_sha256"`
	Idempotent bool   `json:"idempotent,omitempty"`
	// Send makes the call and returns its result as it will be replayed.
	// Its error is an *effect.CreateError: ClassNotSent (never reached the
	// upstream), ClassRefused (the upstream answered that it did nothing),
	// ClassMaybe (the answer was lost). Nil: the call cannot be made here
	// (a payload read back from the ledger).
	Send func(ctx context.Context) (string, error) `json:"-"`
}

func init() { register[ToolCall]() }

// ArgsHash is the hex SHA-256 of canonical arguments, ToolCall's ArgsSHA256.
func ArgsHash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

func (ToolCall) Kind() string { return "tool-call" }

// Face: see effect.Face. `ghonce mcp --upstream` makes one of any upstream
// tool it does not guard as a kind of its own.
func (ToolCall) Face() effect.Face { return effect.Face{} }

// Target is the arguments' hash, shortened: 128 bits keep two different
// calls apart.
func (c ToolCall) Target() string {
	if len(c.ArgsSHA256) < 32 {
		return c.ArgsSHA256
	}
	return c.ArgsSHA256[:32]
}

func (ToolCall) aim(target string) Spec { return ToolCall{ArgsSHA256: target} }

func (c ToolCall) Validate(string) error {
	switch {
	case strings.TrimSpace(c.Tool) == "":
		return errors.New("no tool name")
	case len(c.ArgsSHA256) != 64:
		return fmt.Errorf("invalid arguments hash %q: want a hex SHA-256", c.ArgsSHA256)
	}
	if _, err := hex.DecodeString(c.ArgsSHA256); err != nil {
		return fmt.Errorf("invalid arguments hash %q: want a hex SHA-256", c.ArgsSHA256)
	}
	return nil
}

// Unverifiable: nothing can look a tool call's effect up.
func (ToolCall) Unverifiable() bool { return true }

// NotSent: a call that never reached the upstream did nothing.
func (ToolCall) NotSent() string {
	return "the call never reached the upstream MCP server, so nothing happened"
}

func (c ToolCall) Find(_ context.Context, env *Env, key string) effect.Result {
	return findInLedger(env, c.Idempotent, func(lostLedger bool) error {
		settle := fmt.Sprintf("Check whether it happened (on GitHub, for github-mcp-server), then run `ghonce resolve %s --done` if it did or `ghonce resolve %s --retry` if it did not; the next identical call then replays or sends it", key, key)
		if lostLedger {
			return fmt.Errorf("the ledger was created by this run, so an earlier ledger may have been lost, and ghonce cannot tell whether %s was already called with these arguments (create the ledger ahead with `ghonce init`). %s", c.Tool, settle)
		}
		return fmt.Errorf("an earlier call of %s with these arguments may have happened: its answer was lost (the upstream died or the call was cut off), and ghonce never sends such a call again by itself. %s", c.Tool, settle)
	})
}

func (c ToolCall) Create(ctx context.Context, _ *Env, _ string) (effect.Artifact, error) {
	if c.Send == nil {
		return effect.Artifact{}, &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("call %s: no upstream MCP server here to send it to", c.Tool)}
	}
	text, err := c.Send(ctx)
	if err != nil {
		return effect.Artifact{}, err
	}
	return effect.Artifact{Text: text}, nil
}

var _ Spec = ToolCall{}
