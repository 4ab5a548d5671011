# ttmcp — build, run, test, bench. `make run` and `make test` are the two
# commands a newcomer needs; everything else is a step of those.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(firstword $(wildcard $(GOROOT)/lib/wasm/wasm_exec.js $(GOROOT)/misc/wasm/wasm_exec.js))
WASM_RUN  := $(firstword $(wildcard $(GOROOT)/lib/wasm/go_js_wasm_exec $(GOROOT)/misc/wasm/go_js_wasm_exec))
DIST      := jsapi/dist
CHROME    ?= /usr/bin/chromium
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO_SRC    := $(shell find . -name '*.go' -not -path './node_modules/*') go.mod go.sum
NATIVE_PKGS = $$($(GO) list ./... | grep -v '/webtest$$')

.PHONY: all build wasm backend run test check test-go test-wasm webtest bench chromium clean

all: build

build: backend

wasm: $(DIST)/tauritavern-mcp.wasm $(DIST)/wasm_exec.js

$(DIST)/tauritavern-mcp.wasm: $(GO_SRC)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o $@ ./wasm

$(DIST)/wasm_exec.js: $(WASM_EXEC)
	cp $< $@

# The backend embeds jsapi/ (loader, declarations, dist/), so it is built
# after the shim.
backend: wasm
	$(GO) build -trimpath -ldflags='-X main.version=$(VERSION)' -o bin/ttmcp ./backend/cmd/ttmcp

run: build
	./bin/ttmcp serve --data-root ./data

# Everything, on a fresh machine: formatting and vet (native and wasm),
# the Go tests with the race detector, the shim's tests under Node, and the
# browser tests in headless Chromium (installed when missing).
test: check test-go test-wasm webtest

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm ./jsapi

test-go:
	$(GO) test -race -count=1 $(NATIVE_PKGS)

test-wasm:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec=$(WASM_RUN) ./wasm

webtest: chromium wasm
	CHROME=$(CHROME) $(GO) test -count=1 -timeout 15m ./webtest

# Benchmarks print ratios against a baseline measured in the same run.
bench: chromium wasm
	CHROME=$(CHROME) $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 20m ./webtest

chromium:
	@if [ ! -x "$(CHROME)" ]; then \
	  echo "installing Debian chromium (needed by the browser tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@"$(CHROME)" --version 2>/dev/null | tail -n 1

clean:
	rm -rf bin $(DIST)/*.wasm $(DIST)/wasm_exec.js
