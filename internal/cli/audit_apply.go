package cli

import (
	"context"
	"errors"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
)

func applyActions(ctx context.Context, f *factory, gh *ghcheck.Client, r ghcheck.Repo, rep *audit.Report, actions []auditAction) error {
	return errors.New("audit --apply: not built yet")
}
