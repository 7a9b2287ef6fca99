# ghonce: the targets a fresh clone needs. Go 1.24+ and a C compiler (cgo,
# for SQLite) are the only requirements.
GO ?= go
BIN := bin/ghonce

.PHONY: build test demo lint bench fuzz reliability reliability-short clean

build:
	$(GO) build -o $(BIN) ./cmd/ghonce

# The test command CI runs (.ci/run). -race; every package; Postgres-free.
test:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) test -race -count=1 ./...

demo: build
	./$(BIN) demo

lint:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }

# The performance report (internal/benchreport): the ledger's fast path with
# its fdatasync floor, the whole CLI process with its process-start floor, and
# the seeds' ledgers side by side, all in one run; prints the figures and
# writes docs/performance.md. A few minutes on 2 cores (the first run also
# generates a million-entry ledger, kept in $TMPDIR). BENCH_FLAGS=-rounds=9 for
# more rounds, -peers DIR where ../shared/bench-peers is not.
bench:
	$(GO) run ./internal/benchreport -out docs/performance.md $(BENCH_FLAGS)

# Fuzz the key derivation and the marker parser for 30 s each. Their seed
# corpus (taskkey/testdata/fuzz) runs as ordinary tests in `make test`.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzKey$$' -fuzztime 30s ./taskkey
	$(GO) test -run '^$$' -fuzz '^FuzzParseMarker$$' -fuzztime 30s ./taskkey

# The reliability matrix (internal/reliability/): the real binary, built with crash
# points, killed, raced and faulted against the fake GitHub. The full run
# writes docs/reliability.md; the short one is CI's (.ci/run). A smoke run
# is part of `make test`. Add RELIABILITY_FLAGS=-reliability.seed=N to
# replay a randomised loop.
RELIABILITY = $(GO) test -count=1 -run '^TestMatrix$$' ./internal/reliability -v

reliability:
	$(RELIABILITY) -timeout 30m -reliability.profile=full -reliability.out=$(CURDIR)/docs/reliability.md $(RELIABILITY_FLAGS)

reliability-short:
	$(RELIABILITY) -timeout 20m -reliability.profile=short $(RELIABILITY_FLAGS)

clean:
	rm -rf bin
