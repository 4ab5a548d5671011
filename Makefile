# ttmcp — build, run, test, bench. `make run` and `make test` are the two
# commands a newcomer needs; everything else is a step of those.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(firstword $(wildcard $(GOROOT)/lib/wasm/wasm_exec.js $(GOROOT)/misc/wasm/wasm_exec.js))
WASM_RUN  := $(firstword $(wildcard $(GOROOT)/lib/wasm/go_js_wasm_exec $(GOROOT)/misc/wasm/go_js_wasm_exec))
DIST      := jsapi/dist
CHROME    ?= /usr/bin/chromium
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Release targets: GOOS/GOARCH. android/arm64 is for Termux.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 android/arm64
GO_SRC    := $(shell find . -name '*.go' -not -path './node_modules/*') go.mod go.sum
NATIVE_PKGS = $$($(GO) list ./... | grep -v '/webtest$$')
# Pinned Node tooling (tools/node): Node 22, server-everything, the
# conformance runners. NODE_STAMP is newer than the lock after a good npm ci.
NODE_TOOLS  := $(CURDIR)/tools/node
NODE_BIN    := $(NODE_TOOLS)/node_modules/.bin
NODE_STAMP  := $(NODE_TOOLS)/node_modules/.installed
CONFORMANCE := $(CURDIR)/bin/conformance
CONF_CMD    := backend/cmd/ttmcp-conformance
# The mcp-manager extension (extension/): strict TypeScript + React, bundled
# by esbuild; its npm packages are pinned by extension/package-lock.json.
EXT         := extension
EXT_BIN     := $(CURDIR)/$(EXT)/node_modules/.bin
EXT_STAMP   := $(EXT)/node_modules/.installed
EXT_BUNDLE  := $(EXT)/dist/index.bundle.js
EXT_SRC     := $(shell find $(EXT)/src -type f -name '*.ts*' -not -name '*.test.*' 2>/dev/null) \
               $(EXT)/build.mjs $(EXT)/tsconfig.json jsapi/tauritavern-mcp.d.ts

.PHONY: all build wasm backend run test check cross dist typecheck test-js test-go test-wasm webtest bench chromium clean
.PHONY: node-tools peers conformance playground-vendor extension extension-deps test-extension extension-layers

all: build

build: backend

wasm: $(DIST)/tauritavern-mcp.wasm $(DIST)/wasm_exec.js

$(DIST)/tauritavern-mcp.wasm: $(GO_SRC)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o $@ ./wasm

$(DIST)/wasm_exec.js: $(WASM_EXEC)
	cp $< $@

# The playground's borrowed libraries (tools/playground, pinned by its
# lock): jQuery and toastr as plain globals and Font Awesome 6.5.2, as
# SillyTavern ships them, copied into backend/server/playground/vendor/,
# which the backend embeds.
PG_VENDOR := backend/server/playground/vendor
PG_NPM    := tools/playground/node_modules
PG_STAMP  := $(PG_VENDOR)/.copied

playground-vendor: $(PG_STAMP)

$(PG_STAMP): tools/playground/package.json tools/playground/package-lock.json
	cd tools/playground && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	rm -rf $(PG_VENDOR)/jquery $(PG_VENDOR)/toastr $(PG_VENDOR)/fontawesome
	mkdir -p $(PG_VENDOR)/jquery $(PG_VENDOR)/toastr $(PG_VENDOR)/fontawesome/css $(PG_VENDOR)/fontawesome/webfonts
	cp $(PG_NPM)/jquery/dist/jquery.min.js $(PG_NPM)/jquery/LICENSE.txt $(PG_VENDOR)/jquery/
	cp $(PG_NPM)/toastr/build/toastr.min.js $(PG_NPM)/toastr/build/toastr.min.css $(PG_VENDOR)/toastr/
	cp $(PG_NPM)/@fortawesome/fontawesome-free/LICENSE.txt $(PG_VENDOR)/fontawesome/
	cp $(addprefix $(PG_NPM)/@fortawesome/fontawesome-free/css/,fontawesome.min.css solid.min.css brands.min.css regular.min.css) $(PG_VENDOR)/fontawesome/css/
	cp $(addprefix $(PG_NPM)/@fortawesome/fontawesome-free/webfonts/,fa-solid-900.woff2 fa-brands-400.woff2 fa-regular-400.woff2) $(PG_VENDOR)/fontawesome/webfonts/
	touch $@

# The backend embeds jsapi/ (loader, declarations, dist/), the playground
# and extension/ (the built bundle), so it is built after the shim, the
# vendored libraries and the extension.
backend: wasm playground-vendor extension
	$(GO) build -trimpath -ldflags='$(LDFLAGS)' -o bin/ttmcp ./backend/cmd/ttmcp

# Release binaries for every platform in PLATFORMS, with everything the
# backend embeds (built by the backend target first), named
# ttmcp-<version>-<os>-<arch>[.exe], and their SHA-256 sums. Pure Go
# (CGO_ENABLED=0), so one machine builds them all.
dist: backend
	rm -rf dist && mkdir -p dist
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  out=dist/ttmcp-$(VERSION)-$$os-$$arch$$ext; echo "  $$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags='-s -w $(LDFLAGS)' -o $$out ./backend/cmd/ttmcp; \
	done
	cd dist && sha256sum ttmcp-* > SHA256SUMS && cat SHA256SUMS
	$(GO) run ./tools/distcheck $(VERSION) dist/ttmcp-*

# The extension's bundle (one self-contained ES module, React included).
extension: $(EXT_BUNDLE)

$(EXT_BUNDLE): $(EXT_STAMP) $(EXT_SRC)
	cd $(EXT) && node build.mjs

extension-deps: $(EXT_STAMP)

$(EXT_STAMP): $(EXT)/package.json $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The backend and, beside it, the demo MCP server the playground offers to
# add (http://127.0.0.1:7879/mcp).
run: build
	./bin/ttmcp serve --data-root ./data --demo

# Everything, on a fresh machine: formatting, vet (native and wasm),
# the tree (no tracked compiled binary, no tracked file over 2 MiB) and the
# extension's layers,
# the Go tests with the race detector, the shim's tests under Node, and the
# browser tests in headless Chromium (installed when missing).
# Then the gateway against server-everything, and the MCP conformance suite.
test: check cross typecheck test-extension test-plugin test-js test-go test-wasm webtest peers conformance

check: $(EXT_STAMP) node-tools
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm ./jsapi
	$(GO) run ./tools/treecheck
	$(MAKE) --no-print-directory extension-layers

# The extension's layers (docs/ARCHITECTURE.md): no circle, no import from a
# lower folder into a higher one, no feature importing another, by the rules
# in extension/.dependency-cruiser.cjs (a failure names its rule); then the
# rules themselves against a tree that breaks each once. dependency-cruiser
# needs Node 22, which tools/node pins.
extension-layers: $(EXT_STAMP) node-tools
	cd $(EXT) && $(NODE_BIN)/node $(EXT_BIN)/depcruise src --config .dependency-cruiser.cjs --output-type err
	cd $(EXT) && $(NODE_BIN)/node test/layers.check.mjs

# Every release platform still compiles, and vet runs once per GOOS, so a
# change that breaks Windows, macOS or Android fails here and not on a
# user's machine.
cross:
	@set -e; vetted=; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "cross: build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null ./backend/cmd/ttmcp; \
	  case " $$vetted " in *" $$os "*) ;; *) vetted="$$vetted $$os"; echo "cross: vet $$os"; \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./backend/... ./jsapi ./extension;; esac; \
	done

# The TypeScript declarations must compile, with a consumer of the surface.
typecheck: node-tools
	$(NODE_TOOLS)/node_modules/.bin/tsc --strict --noEmit --target es2022 --module esnext \
	  --moduleResolution bundler --lib es2022,dom jsapi/tauritavern-mcp.d.ts jsapi/legacy-mcp-tools.d.ts jsapi/tauritavern-mcp.check.ts

# The SillyTavern server plugin (plugin/): its JSDoc types under strict
# tsc against Node 20's types (SillyTavern's minimum), then its node:test
# tests: the proxy behind a stand-in of SillyTavern's middleware chain (real
# Express and middleware from tools/node) against a fake backend, and
# supervision against the real bin/ttmcp.
test-plugin: backend node-tools
	$(NODE_BIN)/tsc -p plugin/tsconfig.json
	TTMCP_BIN=$(CURDIR)/bin/ttmcp TTMCP_NODE_TOOLS=$(NODE_TOOLS) $(NODE_BIN)/node --test --test-timeout=60000 plugin/test/*.test.mjs

# The extension: strict type check, then its component tests (vitest, happy-dom).
test-extension: $(EXT_STAMP)
	cd $(EXT) && $(EXT_BIN)/tsc --noEmit -p tsconfig.json
	cd $(EXT) && $(EXT_BIN)/vitest run

# The page modules' own tests (node:test).
test-js:
	node --test jsapi/*.test.mjs

test-go: playground-vendor extension
	$(GO) test -race -count=1 $(NATIVE_PKGS)

test-wasm:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec=$(WASM_RUN) ./wasm

webtest: chromium backend node-tools
	CHROME=$(CHROME) TTMCP_BIN=$(CURDIR)/bin/ttmcp TTMCP_NODE_TOOLS=$(NODE_TOOLS) $(GO) test -count=1 -timeout 15m ./webtest

# Node tooling pinned by tools/node/package-lock.json, installed once (and
# again when the lock changes); everything after runs offline.
node-tools: $(NODE_STAMP)

$(NODE_STAMP): tools/node/package.json tools/node/package-lock.json
	cd tools/node && npm ci --no-audit --no-fund --loglevel=error
	@PATH="$(NODE_BIN):$$PATH" node --version | grep -q '^v22\.' || { echo "tools/node: node 22 missing"; exit 1; }
	touch $@

# The gateway, and ttmcp end to end (a stdio server added with `ttmcp
# stdio add`), against @modelcontextprotocol/server-everything (an
# independent peer); without TTMCP_NODE_TOOLS these tests skip.
peers: node-tools
	TTMCP_NODE_TOOLS=$(NODE_TOOLS) $(GO) test -race -count=1 -run '^TestPeer' ./backend/gateway ./backend/cmd/ttmcp

# The client scenarios of the MCP conformance suite against our gateway:
# 0.1.16 (the 2025 revisions) and 0.2.0-alpha.12 at 2026-07-28, each with its
# committed baseline of expected failures (docs/CONFORMANCE.md).
conformance: node-tools
	$(GO) build -o $(CONFORMANCE)/ttmcp-conformance ./$(CONF_CMD)
	@status=0; export PATH="$(NODE_BIN):$$PATH"; \
	  bash $(CONF_CMD)/run-suite.sh 2025 $(NODE_TOOLS)/node_modules/conformance-2025/dist/index.js \
	    $(CONFORMANCE)/ttmcp-conformance $(CURDIR)/$(CONF_CMD)/expected-failures-2025.yml $(CONFORMANCE) || status=1; \
	  bash $(CONF_CMD)/run-suite.sh 2026 $(NODE_TOOLS)/node_modules/conformance-2026/dist/index.js \
	    $(CONFORMANCE)/ttmcp-conformance $(CURDIR)/$(CONF_CMD)/expected-failures-2026.yml $(CONFORMANCE) \
	    --spec-version 2026-07-28 || status=1; \
	  exit $$status

# Benchmarks print ratios against a baseline measured in the same run.
# Each benchmark runs ttmcp and its baseline alternately in the same run
# and reports both and their ratio (x-…). A loopback warm call is a few
# hundred µs, so its ratio needs 10,000 calls a side to settle (at 3,000
# it still moves ±0.04 between runs; docs/BENCHMARKS.md).
bench: chromium backend node-tools
	$(GO) test -count=1 -run '^$$' -bench . -skip '^BenchmarkWarmCall$$' -benchtime 20x ./backend/...
	$(GO) test -count=1 -run '^$$' -bench '^BenchmarkWarmCall$$' -benchtime 10000x ./backend/gateway
	CHROME=$(CHROME) TTMCP_BIN=$(CURDIR)/bin/ttmcp TTMCP_NODE_TOOLS=$(NODE_TOOLS) $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 20m ./webtest

chromium:
	@if [ ! -x "$(CHROME)" ]; then \
	  echo "installing Debian chromium (needed by the browser tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@"$(CHROME)" --version 2>/dev/null | tail -n 1

clean:
	rm -rf bin dist $(DIST)/*.wasm $(DIST)/wasm_exec.js $(EXT_BUNDLE)
	rm -rf $(PG_VENDOR)/jquery $(PG_VENDOR)/toastr $(PG_VENDOR)/fontawesome $(PG_STAMP)
