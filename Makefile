# Ferry: `make run` runs the local stack with a demo app; `make test` runs
# every test against the real components. See README.md.
SHELL := /bin/bash
GO ?= go
TEST_TIMEOUT ?= 75m

.PHONY: all deps docs tools build image run test test-cluster test-argocd test-unit bench record-histories fmt vet

all: build

# The Debian packages the stack needs, installed when missing (hack/deps.sh:
# as root; otherwise it prints the one apt-get line to run and stops).
deps:
	@hack/deps.sh run

# Builds the stack's components once into ~/.cache/ferry/tools (by version),
# saying which, how many of how many, and for how long.
tools: deps
	@hack/tools.sh >/dev/null

# Static binaries (no cgo): make image packs them into an image without a
# base, and a render sandbox runs them without the host's libraries.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ferry ./starter
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ferry-worker ./worker
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ferry-render ./renderer
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ferry-server ./server

# Ferry's container image, without Docker (hack/image): the static binaries
# on no base image, non-root (65532), pushed to IMAGE_REGISTRY (host:port;
# default: the registry of the running `ferry dev up` in DEV_STATE_DIR). It
# prints the image's reference by digest and writes the digest into the
# example overlays of deploy/ (their images: entry ferry-worker).
DEV_STATE_DIR ?= $${XDG_STATE_HOME:-$$HOME/.local/state}/ferry/dev
IMAGE_REGISTRY ?=
image: build
	@$(GO) run ./hack/image -bin bin -state-dir "$(DEV_STATE_DIR)" \
		-pin deploy/overlays/example/control/kustomization.yaml \
		-pin deploy/overlays/example/region-us-east-1/kustomization.yaml $(if $(IMAGE_REGISTRY),-registry $(IMAGE_REGISTRY))

run: tools build
	@hack/run.sh

test: tools build
	@hack/deps.sh test
	FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) hack/test.sh
	@$(MAKE) --no-print-directory test-cluster

# The second pass of make test: end-to-end tests against a Temporal cluster
# (`ferry dev up --temporal cluster`: the server's services as separate
# processes on PostgreSQL) instead of the dev server. Chosen for what differs
# there at a small cost (about 2 minutes with the cluster's start): the main
# flow (apply, three pushes synced to two regions, refresh, get, history,
# metrics, delete), workflows surviving a restart of every process of the
# cluster, and the temporal CLI against its frontend. CLUSTER_TESTS=.
# runs the whole suite there (docs/contributing/testing.md, "On a Temporal cluster").
CLUSTER_TESTS ?= ^(TestEndToEnd|TestTemporalRestart|TestTemporalCLI)$$
test-cluster: tools build
	FERRY_TEMPORAL=cluster FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '$(CLUSTER_TESTS)' ./e2e/

# Argo CD itself on the stack (e2e/argocd, build tag argocd): Argo CD is built
# from its Go module the first time (hack/tools.sh argocd, about 25 minutes cold
# on 2 cores), so make test does not run these.
test-argocd: tools build
	FERRY_TOOLS_BIN=$$(hack/tools.sh argocd) FERRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -tags argocd -timeout $(TEST_TIMEOUT) ./e2e/argocd/

# Tests that need no stack: quick feedback while editing.
test-unit:
	$(GO) test -count=1 -short ./...

# The benchmarks on the real stack (bench/README.md), then the Go benchmarks
# of the packages that have some; the report goes to $(BENCH_OUT)/report.md.
# BENCH_FLAGS passes options to ferry-bench (BENCH_FLAGS='-only push -pushes 5');
# A full run (no -only) is also kept as $(BENCH_RESULTS)/<date>-<commit>.md, Go
# benchmarks included. BENCH_GO=0 skips the Go benchmarks. Flux's controllers, the peer of push, apply
# and peer-idle, are built for the benchmarks only (hack/tools.sh flux, once).
BENCH_OUT ?= bench/out
BENCH_FLAGS ?=
BENCH_GO ?= 1
BENCH_RESULTS ?= bench/results
bench: tools build
	@hack/deps.sh bench
	@mkdir -p $(BENCH_OUT)
	@tools=$$(hack/tools.sh flux argocd); status=0; \
	FERRY_TOOLS_BIN=$$tools FERRY_BIN=$(CURDIR)/bin $(GO) run ./bench/cmd/ferry-bench -keep $(BENCH_RESULTS) $(BENCH_FLAGS) $(BENCH_OUT) || status=$$?; \
	if [ "$(BENCH_GO)" = 1 ]; then FERRY_TOOLS_BIN=$$tools FERRY_BIN=$(CURDIR)/bin hack/bench-report.sh $(BENCH_OUT) || status=$$?; \
		if [ -s $(BENCH_OUT)/kept ]; then sed -n '/^## Go benchmarks$$/,$$p' $(BENCH_OUT)/report.md | { echo; cat; } >> "$$(cat $(BENCH_OUT)/kept)"; fi; fi; \
	echo "report: $(BENCH_OUT)/report.md"; exit $$status

# Records more workflow histories for the replay tests to replay. Earlier
# recordings stay: each is a workflow version that must keep replaying.
record-histories: tools build
	FERRY_TOOLS_BIN=$$(hack/tools.sh) FERRY_BIN=$(CURDIR)/bin FERRY_RECORD_HISTORIES=1 $(GO) test -count=1 -timeout 45m ./e2e/...

# Regenerates docs/reference from the code:
# the CLI from cobra, the worker's flags, the fields of each kind. make test
# fails while a generated page is stale.
docs:
	$(GO) test -count=1 ./starter ./worker ./contract ./internal/app ./internal/appset -run 'Reference' -update
	$(GO) test -count=1 ./internal/crds -run 'Generated' -update

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	$(GO) vet -tags argocd ./e2e/argocd/
