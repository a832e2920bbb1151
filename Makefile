# Ferry: `make run` runs the local stack with a demo app; `make test` runs
# every test against the real components. See README.md.
SHELL := /bin/bash
GO ?= go
TEST_TIMEOUT ?= 75m

.PHONY: all tools build run test test-unit bench record-histories fmt vet

all: build

# Builds the stack's components once into ~/.cache/ferry/tools (by version).
tools:
	@hack/tools.sh >/dev/null

build:
	$(GO) build -o bin/ferry ./starter
	$(GO) build -o bin/ferry-worker ./worker

run: tools build
	@hack/run.sh

test: tools build
	FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -p 2 -timeout $(TEST_TIMEOUT) ./...

# Tests that need no stack: quick feedback while editing.
test-unit:
	$(GO) test -count=1 -short ./...

# Go benchmarks of every package; the report goes to $(BENCH_OUT)/report.md.
BENCH_OUT ?= bench/out
bench: tools build
	@mkdir -p $(BENCH_OUT)
	FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin $(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m ./... | tee $(BENCH_OUT)/bench.txt
	@hack/bench-report.sh $(BENCH_OUT)/bench.txt > $(BENCH_OUT)/report.md && echo "report: $(BENCH_OUT)/report.md"

# Re-records the workflow histories the replay tests replay.
record-histories: tools build
	rm -rf workflows/testdata/histories
	FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin FERRY_RECORD_HISTORIES=1 $(GO) test -count=1 -timeout 30m ./e2e/

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
