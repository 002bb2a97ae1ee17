# mcptrunk: build, demo, test, lint, bench.
GO      ?= go
BIN     := bin
NPM_DIR := testdata/npm
# The npm servers the interop tests run, installed from the lockfile.
NPM_STAMP := $(NPM_DIR)/node_modules/.package-lock.json

.PHONY: build demo test lint bench bench-peers fuzz npm hydra cross dist clean

# Binaries are built as releases are (.ci/dist.go, deploy/Dockerfile):
# -trimpath, -s -w to leave out the symbol table and DWARF, which only a
# debugger reads (about a third of the file), and without cgo, so the
# binary is static and maps no libc (about 0.7 MB less idle RSS, 1 ms less
# per start). BUILDFLAGS= CGO= for a build to debug.
BUILDFLAGS ?= -trimpath -ldflags='-s -w'
CGO        ?= CGO_ENABLED=0

build:
	$(CGO) $(GO) build $(BUILDFLAGS) -o $(BIN)/ ./cmd/...

# The demo: two example servers of ours that both have a tool called
# "search", behind one trunk. It builds only the three binaries it runs,
# not the bench and test servers `build` makes as well.
demo:
	$(CGO) $(GO) build $(BUILDFLAGS) -o $(BIN)/ ./cmd/mcptrunk ./cmd/mcptrunk-notes ./cmd/mcptrunk-weather
	@echo '$$ mcptrunk list --config testdata/demo/mcptrunk.json'
	@./$(BIN)/mcptrunk list --config testdata/demo/mcptrunk.json
	@echo
	@echo '$$ mcptrunk call --config testdata/demo/mcptrunk.json mcp__weather__search '"'"'{"city":"os"}'"'"
	@./$(BIN)/mcptrunk call --config testdata/demo/mcptrunk.json mcp__weather__search '{"city":"os"}'
	@echo
	@echo '$$ mcptrunk call --config testdata/demo/mcptrunk.json mcp__notes__search '"'"'{"query":"proxy"}'"'"
	@./$(BIN)/mcptrunk call --config testdata/demo/mcptrunk.json mcp__notes__search '{"query":"proxy"}'

npm: $(NPM_STAMP)

$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund --ignore-scripts
	@touch $@

# The team tests run Ory Hydra, built from its module once per machine
# (internal/testkit/hydra): built first, its minutes count against no test.
hydra:
	$(GO) run ./internal/testkit/hydra/prebuild

# A binary built with -race sleeps atexit_sleep_ms (1s by default) before
# it exits, to let a last race report out: a second of wall time per test
# package (59 of them, two at a time), and per race-built process a test
# starts. 50 ms still lets a report out; a GORACE of your own is kept.
GORACE ?= atexit_sleep_ms=50
test: npm hydra
	GORACE='$(GORACE)' $(GO) test -race -count=1 ./...

# staticcheck and goimports run at pinned versions through the module proxy,
# so go.mod keeps no tool dependencies. Deprecations the trunk must keep
# supporting (roots, sampling and logging: SEP-2577) are accepted per file
# with a //lint:file-ignore that says why.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS   := golang.org/x/tools/cmd/goimports@v0.52.0
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	@ungrouped=$$($(GO) run $(GOIMPORTS) -l $$(git ls-files '*.go')); \
	  if [ -n "$$ungrouped" ]; then echo "goimports would change: $$ungrouped"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy -diff

# Every platform a host runs on must at least build and vet.
cross:
	GOOS=darwin  $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin  $(GO) build -o /dev/null ./cmd/...
	GOOS=windows $(GO) build -o /dev/null ./cmd/...

# Benchmarks (docs/performance.md): the Go micro-benchmarks of the hot path,
# then mcptrunk-bench, which first measures what every start costs (binary
# size, `mcptrunk version`, package init, the first initialize answer, idle
# RSS), then sends the same workloads straight to mcptrunk-notes and through
# the trunk, interleaved, and prints the table with the ratios and targets. About two minutes on 2 cores;
# BENCHFLAGS=-quick for under a minute.
BENCHFLAGS ?=
bench: build
	$(GO) test -run=NONE -bench=. -benchmem -benchtime=200ms ./...
	./$(BIN)/mcptrunk-bench -trunk $(BIN)/mcptrunk -notes $(BIN)/mcptrunk-notes -chaos $(BIN)/mcptrunk-chaos $(BENCHFLAGS)

# mcptrunk beside peer aggregating proxies (docs/performance.md, "Against
# peer proxies"): installs them (mcp-hub from testdata/npm-peers' lockfile,
# ToolHive's thv into bin/peers), then runs the peers workload, which skips
# any peer that did not install. Not part of test or CI: the installs can fail.
PEERS_BIN := $(abspath $(BIN)/peers)
bench-peers: build
	npm ci --prefix testdata/npm-peers --no-audit --no-fund --ignore-scripts || echo "mcp-hub did not install: the bench skips it"
	test -x $(PEERS_BIN)/thv || GOBIN=$(PEERS_BIN) $(GO) install github.com/stacklok/toolhive/cmd/thv@v0.47.0 || echo "thv did not install: the bench skips it"
	./$(BIN)/mcptrunk-bench -only peers -trunk $(BIN)/mcptrunk -notes $(BIN)/mcptrunk-notes -peers-bin $(PEERS_BIN) $(BENCHFLAGS)

# Every fuzz target, each for FUZZTIME beyond its seed corpus (which
# `make test` runs as ordinary tests). CI runs it briefly; run it longer by
# hand after touching a parser: make fuzz FUZZTIME=5000000x. The budget is a
# count of executions, not a duration: Go 1.26's fuzz coordinator can report
# a spurious "context deadline exceeded" failure when a duration runs out
# while a worker is busy (golang/go#75804, fixed in Go 1.27).
# A target may name its own budget (pkg:Fn:budget) where FUZZTIME
# executions would take minutes: the policy engine's differential target
# runs cel-go beside ours at 1,000-7,000 executions a second here. A
# FUZZTIME given on the command line applies to every target.
FUZZTIME ?= 300000x
FUZZ_TARGETS := \
	internal/jsonrpc:FuzzConnInput internal/jsonrpc:FuzzAppendRawKeepsFraming \
	internal/jsonrpc:FuzzScanMessageMatchesUnmarshal internal/jsonscan:FuzzNeedsLook \
	internal/jsonscan:FuzzSkipValue naming:FuzzNameSplit naming:FuzzResourceURI \
	internal/rawjson:FuzzReplaceString internal/rawjson:FuzzScanFieldsMatchesDecoder \
	internal/rawjson:FuzzAppendJSONStringMatchesMarshal internal/rawjson:FuzzReplaceReservedMeta \
	proxy:FuzzNamespaceResults upstream/transport/stdio/internal/winexec:FuzzQuoteForCmd \
	internal/redisconn:FuzzReadReply internal/policy/expr:FuzzAgainstCEL:30000x
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; budget=$(FUZZTIME); \
	  case $$rest in *:*) [ "$(origin FUZZTIME)" = file ] && budget=$${rest#*:};; esac; \
	  echo "fuzz $$pkg $$fn ($$budget)"; \
	  $(GO) test -run=NONE -fuzz="^$$fn\$$" -fuzztime=$$budget ./$$pkg; \
	done

# Release archives in dist/ (see .ci/dist.go): one per platform, with the
# version stamped (the nearest tag, else the commit) and SHA256SUMS. The
# files in them carry the commit's time, so rebuilding a commit gives the
# same archives.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DIST    := dist
dist:
	rm -rf $(DIST)
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)} \
	  $(GO) run ./.ci/dist.go -version $(VERSION) -out $(DIST)

clean:
	rm -rf $(BIN) $(DIST)
