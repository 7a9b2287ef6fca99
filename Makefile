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

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzKey -fuzztime 30s ./taskkey
	$(GO) test -run '^$$' -fuzz FuzzParseMarker -fuzztime 30s ./taskkey

clean:
	rm -rf bin
