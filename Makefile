# ghonce: the targets a fresh clone needs. Go 1.26+ (go.mod) and a C compiler (cgo,
# for SQLite) are the only requirements.
GO ?= go
BIN := bin/ghonce

.PHONY: build github-mcp-server test demo docs lint bench bench-github fuzz reliability reliability-short clean

# ghonce version names the build: VERSION is the nearest release tag
# (v1.2.3, or v1.2.3-4-gabc1234-dirty past it; empty without one: "dev"),
# COMMIT the checkout's commit, both by -ldflags, since the toolchain stamps
# no VCS revision in a git worktree or with GOFLAGS=-buildvcs=false.
# -buildvcs=auto stamps it (and whether the tree was modified) where it can.
VERSION ?= $(shell git describe --tags --match 'v[0-9]*.[0-9]*.[0-9]*' --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/ghonce/ghonce/internal/cli.version=$(VERSION) -X github.com/ghonce/ghonce/internal/cli.commit=$(COMMIT)

# The first build on a machine compiles SQLite's C code (go-sqlite3, through
# cgo) for minutes with nothing printed, so sqlite-notice says so in one
# line on stderr, only when the build cache lacks go-sqlite3 built with the
# flags $(1) (-race for make test); otherwise it prints nothing. `go list`
# answers from the cache in under a second and builds nothing.
sqlite-notice = @$(GO) list $(1) -f '{{if .Stale}}building go-sqlite3 with cgo the first time (SQLite in C): this takes a few minutes, once{{end}}' github.com/mattn/go-sqlite3 2>/dev/null | grep . >&2 || true

build:
	$(call sqlite-notice,)
	$(GO) build -buildvcs=auto -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ghonce

# github-mcp-server, pinned in tools/github-mcp-server/go.mod: the real
# upstream of `ghonce mcp --upstream` in the tests (they find it at
# bin/github-mcp-server, or at $$GHONCE_GITHUB_MCP_SERVER). Built from that
# module, since `go install ...@v1.9.0` reads a version list the module proxy
# refuses here. About a minute on 2 cores; a no-op once built.
GITHUB_MCP_SERVER := bin/github-mcp-server
github-mcp-server: $(GITHUB_MCP_SERVER)
$(GITHUB_MCP_SERVER): tools/github-mcp-server/go.mod tools/github-mcp-server/go.sum
	cd tools/github-mcp-server && $(GO) build -o ../../$(GITHUB_MCP_SERVER) github.com/github/github-mcp-server/cmd/github-mcp-server

# The Postgres the ledger's tests use when GHONCE_TEST_POSTGRES is unset and
# one answers locally (each test makes and drops its own schema in it).
PG_TEST_DSN := postgres://postgres@127.0.0.1:5432/test?sslmode=disable
PG_TEST_ENV = GHONCE_TEST_POSTGRES="$${GHONCE_TEST_POSTGRES:-$$(pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && echo '$(PG_TEST_DSN)')}"

# The engine adapters (adapters/temporal, adapters/dbos) are Go modules of
# their own, so that the core module and the ghonce binary do not carry the
# engines' SDKs; `go test ./...` and `go vet ./...` at the root do not enter
# them, so test and lint run each one's from its directory (their go.mod
# replaces the core module with this checkout).
ADAPTERS := $(patsubst %/go.mod,%,$(wildcard adapters/*/go.mod))

# The test command CI runs (.ci/run). -race; every package; the Postgres
# tests run when GHONCE_TEST_POSTGRES is set or Postgres answers on
# 127.0.0.1:5432, and skip loudly otherwise (fail under CI=true). It builds
# the pinned github-mcp-server first, so the proxy's tests run here too.
# -timeout 30m: cmd/ghonce builds the action's -trimpath binary from cold
# caches on a new machine (minutes, mostly SQLite's C code).
test: $(GITHUB_MCP_SERVER)
	$(call sqlite-notice,-race)
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	@command -v node >/dev/null && command -v npm >/dev/null || echo "make test: node or npm not found: TestMCPWithTheTypeScriptSDK (the official TypeScript MCP SDK client) will be skipped"
	@command -v promtool >/dev/null || echo "make test: promtool not found (Debian: prometheus): the alerting rules' tests in ./deploy will be skipped"
	$(PG_TEST_ENV) $(GO) test -race -count=1 -timeout 30m ./...
	@for m in $(ADAPTERS); do echo "make test: $$m (a module of its own)"; \
	  (cd $$m && $(GO) vet ./... && $(PG_TEST_ENV) $(GO) test -race -count=1 -timeout 20m ./...) || exit 1; done

demo: build
	./$(BIN) demo

# The generated documentation: the CLI reference in docs/reference/cli, one
# page per command, from the cobra commands themselves; the MCP guides'
# tool tables, from what `ghonce mcp` serves in its tools/list; and, from
# the kinds' declarations (effect.Face), the table of kinds
# (docs/reference/kinds.md), the audit guide's, action.yml's command input,
# kinds' inputs and dispatch, and the Actions guide's inputs and permissions
# (tools/docgen). Run it after changing a command, a flag, a help text, an
# MCP tool or a kind, and commit what it writes; `go test ./docs` fails
# while the pages are stale.
# (docs/performance.md and docs/reliability.md are `make bench` and
# `make reliability`: measurements, not rendered text.)
docs:
	$(GO) run ./tools/docgen -out docs/reference/cli

# actionlint checks the example workflows, and, in a throwaway repository
# that tools/lintproject lays out, the examples' with: against
# action.yml's inputs and action.yml's composite steps (their scripts too,
# through shellcheck when it is installed). actionlint cannot read action
# metadata in place.
ACTIONLINT = $(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

lint:
	$(GO) vet ./...
	@for m in $(ADAPTERS); do (cd $$m && $(GO) vet ./...) || exit 1; done
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(ACTIONLINT) docs/examples/workflows/*.yml .github/workflows/*.yml
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) run ./tools/lintproject "$$dir" && \
	git -C "$$dir" init -q && \
	cd "$$dir" && $(ACTIONLINT) && echo "actionlint: action.yml and docs/examples/workflows OK"

# The performance report (tools/benchreport), all of docs/performance.md in
# one run: the ledger's fast path with its fdatasync floor, the whole CLI
# process with its process-start floor, the seeds' ledgers side by side,
# concurrent claims on SQLite and Postgres (ledger/store; Postgres when
# GHONCE_TEST_POSTGRES is set or one answers locally), GitHub requests per
# kind, on the wire (the CLI beside a bare create, `ghonce mcp --upstream`
# beside github-mcp-server's own create: it needs bin/github-mcp-server and
# port 80 of a loopback address, so root) and reconcile at N = 40, 1,000
# and 10,000 (tests/bench TestGitHubReport, on the fake), and last the
# action's build step, cold (empty Go caches: minutes, mostly SQLite's C;
# -action-cold=false skips it) and warm. Prints the figures and writes the
# report. About 15 minutes on 2 cores (the first run also generates a
# million-entry ledger, kept in $TMPDIR). BENCH_FLAGS=-rounds=9 for more
# rounds, -peers DIR where ../shared/bench-peers is not, -out FILE to write
# elsewhere; a quick check of the generator:
# BENCH_FLAGS='-rounds=1 -peer-n=10 -peer-n-1m=1 -github-maxn=40 -concurrent-benchtime=20x -action-cold=false'.
bench: $(GITHUB_MCP_SERVER)
	$(PG_TEST_ENV) $(GO) run ./tools/benchreport -out docs/performance.md $(BENCH_FLAGS)

# The GitHub part of `make bench` alone, printed (not written): requests per
# operation and kind, on the wire (the ghonce binary's first create per kind
# at 0, 50 and 100 ms per request beside a bare create, and the same creates
# through `ghonce mcp --upstream` and `ghonce mcp` beside github-mcp-server
# alone, over MCP), reconcile at N = 40, 1,000 (also with 50 ms per
# request) and 10,000 next to the seeds' ledgers, counted on the fake.
# About 5 minutes on 2 cores; GITHUB_FLAGS=-github.maxn=1000 for a faster one,
# GITHUB_FLAGS='-github.only=wire -github.wirereps=1' for the On the wire tables alone.
bench-github: $(GITHUB_MCP_SERVER)
	$(GO) test -count=1 -timeout 20m -run '^TestGitHubReport$$' ./tests/bench -v -github.out=- $(GITHUB_FLAGS)

# Fuzz the key derivation and the marker parser for 30 s each. Their seed
# corpus (taskkey/testdata/fuzz) runs as ordinary tests in `make test`.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzKey$$' -fuzztime 30s ./taskkey
	$(GO) test -run '^$$' -fuzz '^FuzzParseMarker$$' -fuzztime 30s ./taskkey

# The reliability matrix (tests/reliability/): the real binary, built with crash
# points, killed, raced and faulted against the fake GitHub. The full run
# writes docs/reliability.md; the short one is CI's (.ci/run). A smoke run
# is part of `make test`. Add RELIABILITY_FLAGS=-reliability.seed=N to
# replay a randomised loop.
RELIABILITY = $(PG_TEST_ENV) $(GO) test -count=1 -run '^TestMatrix$$' ./tests/reliability -v

reliability:
	$(RELIABILITY) -timeout 60m -reliability.profile=full -reliability.out=$(CURDIR)/docs/reliability.md $(RELIABILITY_FLAGS)

reliability-short:
	$(RELIABILITY) -timeout 40m -reliability.profile=short $(RELIABILITY_FLAGS)

clean:
	rm -rf bin
