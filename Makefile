# snkv: an embedded, ordered key-value store for Go on SQLite (no cgo).
#
#   make demo       run the demo program (a store in a temporary directory)
#   make snkv       build the command-line tool into ./bin/snkv
#   make test       gofmt check, go vet, staticcheck (lint), and every test with -race in -short
#                   mode; then the kvstore and timelog suites (timelog's in tests/ too) again
#                   against encrypted stores (SNKV_TEST_ENCRYPTION=1); then the 20,000-vector
#                   recall test without -race, and internal/hnsw with its pure-Go distance
#                   kernels only (-tags purego)
#   make lint       staticcheck ./..., with and without the tag snkv_nofast
#   make tools      installs staticcheck into .tools/ (not a dependency of the module)
#   make test-sql   every test (-short) with the B-tree fast path built out (tag snkv_nofast)
#   make test-long  every test with -race, slow ones included (soak, crash loops, the LiteFS
#                   replica tests), then fuzzing; under CI=true it first installs fuse3 and
#                   litefs when missing (scripts/install-litefs.sh)
#   make fuzz       the fuzzers (store model, damaged page bytes) for FUZZTIME each (default 60s)
#   make bench      the benchmarks of package kvstore
#   make bench-snkv SNKV's own benchmark re-made in Go, three runs (docs/benchmarks.md)
#   make bench-peers    snkv beside bbolt, buntdb, badger and database/sql, each in its own process
#                       (module bench/, which fetches them; scripts/bench-peers.sh)
#   make bench-timelog  the benchmarks of package timelog (TIMELOG_BENCH_N records, default 1M),
#                       then the C Timelog workload (TIMELOG_NATIVE_N records, default 5M)
#   make bench-vector  every target row of vector search for the clustered and hard sets
#                   (VECTOR_BENCH_N vectors, default 100,000, of VECTOR_BENCH_DIM, default 384)
#   make cross      CGO_ENABLED=0 builds for every supported platform
#   make fmt        gofmt -w the tree
#   make vet        go vet ./...
#   make generate   go generate ./... (kvstore's forwarding files, from internal/forwardgen;
#                   make test fails while they are stale: TestForwardingFilesAreCurrent)

GO ?= go
FUZZTIME ?= 60s

# Tools the checks run, installed into .tools/ by `make tools`: go install
# pkg@version leaves go.mod alone, so they never become requirements of the
# module.
TOOLS := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)

# GOOS/GOARCH pairs that must build without cgo.
PLATFORMS := linux/amd64 linux/arm64 linux/arm darwin/arm64 windows/amd64 android/arm64

.PHONY: all demo snkv test test-sql test-long fuzz bench bench-snkv bench-peers bench-timelog bench-vector cross fmt vet generate lint tools

all: test

demo:
	$(GO) run ./cmd/snkv-demo

snkv:
	$(GO) build -o bin/snkv ./cmd/snkv

# The second run has -count=1: the suites read SNKV_TEST_ENCRYPTION at init,
# before the test cache records what the environment held, so the result of
# the first run would otherwise be reused for it.
test: vet lint
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) test -race -short ./...
	SNKV_TEST_ENCRYPTION=1 $(GO) test -race -short -count=1 ./kvstore/ ./timelog/
	SNKV_TEST_ENCRYPTION=1 $(GO) test -race -short -count=1 -run '^TestTimelog' ./tests/
	$(GO) test -short -run Recall20k ./internal/hnsw/
	$(GO) test -short -tags purego ./internal/hnsw/

# The same suite with writes through SQL statements only, so that the
# fallback every build can be made with stays tested.
test-sql:
	$(GO) vet -tags snkv_nofast ./...
	$(GO) test -short -tags snkv_nofast ./...

test-long: vet
	@if [ "$$CI" = "true" ]; then bash scripts/install-litefs.sh; fi
	$(GO) test -race -timeout 90m ./...
	$(MAKE) fuzz

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzStoreModel -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./kvstore/
	$(GO) test -run '^$$' -fuzz FuzzPageBytes -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./tests/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./kvstore/

bench-snkv:
	$(GO) test -run '^$$' -bench SNKVWorkload -benchtime 1x -count 3 -timeout 30m ./kvstore/

bench-peers:
	scripts/bench-peers.sh

bench-timelog:
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkNative' -benchmem -benchtime 2s ./timelog/
	$(GO) test -run '^$$' -bench '^BenchmarkNative' -benchmem -benchtime 1x ./timelog/

bench-vector:
	VECTOR_BENCH=1 $(GO) test -run '^TestBenchVector$$' -v -timeout 60m ./vector/
	$(GO) test -run '^$$' -bench . -benchmem ./internal/hnsw/ ./vector/

cross:
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build ./..."; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build ./...; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null ./cmd/snkv-demo; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null ./cmd/snkv; \
		echo "CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./...  (the tests build too)"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./...; \
	done

fmt:
	gofmt -w .

vet:
	$(GO) vet ./...

generate:
	$(GO) generate ./...

lint: $(STATICCHECK)
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags snkv_nofast ./...

tools: $(STATICCHECK)

$(STATICCHECK):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@
