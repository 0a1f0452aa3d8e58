# kretrieve developer targets. `make test` is what CI runs (see .ci/run).
GO       ?= go
BIN      ?= bin/kretrieve
REQUESTS ?= 1000

IMAGE            ?= kretrieve:local
JAEGER_IMAGE     ?= kretrieve/jaeger:local
OTELCOL_IMAGE    ?= kretrieve/otelcol:local
PROMETHEUS_IMAGE ?= kretrieve/prometheus:local

.PHONY: image-context release release-check alerts bench-ab tidy all build test chaos console-test lint tools vulncheck run bench fuzz clean image jaeger-image otelcol-image prometheus-image integration up down

all: lint test build

## build: the kretrieve binary (static) in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -o $(BIN) ./cmd/kretrieve

## test: every test, with the race detector (needs no Docker), of the main
## module and of bench/peers (the peers' benchmark module), and the
## alerting rules' unit tests (alerts)
test: alerts
	$(GO) test -race -count=1 ./...
	cd bench/peers && $(GO) test -race -count=1 ./...

## chaos: the chaos test (chaos/, build tag chaos): kretrieve processes under
## load through SIGKILLs and SIGTERMs of every stage, partitions added, a broker
## SIGKILL and a replay SIGKILL, while documents change on the documents topic;
## reports sent, answered, dead-lettered, duplicated and lost, fails on any loss
## and unless every worker ends with the topic's documents (about 2 minutes; no Docker).
## CHAOS_LOGS=DIR keeps every process's log there.
CHAOS_LOGS ?=
chaos:
	KRETRIEVE_CHAOS_LOGS=$(CHAOS_LOGS) $(GO) test -tags chaos -count=1 -v -timeout 15m -run '^TestChaos$$' ./chaos/

## console-test: the console in a real browser (ops/console/e2e): builds the
## binary and the poison publisher, installs the pinned playwright-core from
## ops/console/e2e/package-lock.json (npm ci), then drives Chromium (CHROMIUM,
## default Debian's /usr/bin/chromium) against `kretrieve run --serve` and
## `kretrieve console`; saves screenshots to docs/img/console-*.png. Needs
## Node 18.19+ and npm; `make build` needs neither (the assets are plain files).
CHROMIUM ?= /usr/bin/chromium
console-test: build
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/console-e2e-poison ./ops/console/e2e/poison
	cd ops/console/e2e && npm ci --no-audit --no-fund
	cd ops/console/e2e && CHROMIUM=$(CHROMIUM) KRETRIEVE_BIN=$(CURDIR)/$(BIN) KRETRIEVE_POISON_BIN=$(CURDIR)/bin/console-e2e-poison \
		node --test console.test.mjs

# Linters, installed from the Go module proxy at pinned versions into
# TOOLS_BIN (one directory per version, so a version bump reinstalls).
TOOLS_BIN           ?= $(CURDIR)/bin/tools
STATICCHECK_VERSION ?= v0.8.2
GOVULNCHECK_VERSION ?= v1.9.0
STATICCHECK          = $(TOOLS_BIN)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
GOVULNCHECK          = $(TOOLS_BIN)/govulncheck-$(GOVULNCHECK_VERSION)/govulncheck
BENCHSTAT_VERSION   ?= v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT            = $(TOOLS_BIN)/benchstat-$(BENCHSTAT_VERSION)/benchstat
# buildx builds an image for a platform other than the Docker engine's (make
# image IMAGE_ARCH=...). A `docker buildx` plugin is used when the client has
# one; otherwise the pinned buildx from the module proxy, run standalone, which
# drives the engine's own BuildKit (Docker 20.10 and later).
BUILDX_VERSION      ?= v0.38.2
BUILDX_TOOL          = $(TOOLS_BIN)/buildx-$(BUILDX_VERSION)/buildx
# govulncheck's vulnerability database (govulncheck -db): https://vuln.go.dev,
# or file:///path for a local copy of it.
GOVULNDB            ?= https://vuln.go.dev
# 1: fail when GOVULNDB cannot be reached instead of using the snapshot.
GOVULNCHECK_REQUIRED ?= 0

## lint: gofmt, go vet and staticcheck on the main module, integration/
## (with its build tag) and bench/peers, go mod tidy (see tidy), then
## govulncheck (see vulncheck)
lint: $(STATICCHECK)
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags chaos ./chaos/
	cd integration && $(GO) vet -tags integration ./...
	cd bench/peers && $(GO) vet ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags chaos ./chaos/
	cd integration && $(STATICCHECK) -tags integration ./...
	cd bench/peers && $(STATICCHECK) ./...
	@$(MAKE) --no-print-directory tidy
	@$(MAKE) --no-print-directory vulncheck

# GO_MODULES: every Go module of the repository (internal/repocheck checks
# that .github/dependabot.yml lists each go.mod, and that this list does).
GO_MODULES ?= . integration tools/jaeger tools/prometheus tools/release bench/peers

## tidy: fails when `go mod tidy` would change any module's go.mod or go.sum
## (go mod tidy -diff, Go 1.23+, prints the change and changes nothing)
tidy:
	@for m in $(GO_MODULES); do echo "go mod tidy -diff ($$m)"; (cd $$m && GOWORK=off $(GO) mod tidy -diff) || { echo "go mod tidy needed in $$m"; exit 1; }; done

## vulncheck: govulncheck on every module, the tools modules with their
## build tag (tools/vulncheck.sh). Its database
## is not in the module proxy: where GOVULNDB (an http(s) address) does not
## answer, as on an offline machine, the committed, dated snapshot
## tools/vulndb/osv.tar.gz is used, and the output says so with its date.
## GOVULNCHECK_REQUIRED=1 makes an unreachable GOVULNDB an error instead.
vulncheck: $(GOVULNCHECK)
	GOVULNCHECK=$(GOVULNCHECK) GOVULNDB=$(GOVULNDB) GOVULNCHECK_REQUIRED=$(GOVULNCHECK_REQUIRED) \
		tools/vulncheck.sh $(GO_MODULES)

# promtool, from the Prometheus module tools/prometheus pins (the version
# the container tier's Prometheus is built from), with that module's go.sum.
PROMETHEUS_MODULE_VERSION := $(shell awk '$$NF ~ /^v/ && ($$1 == "github.com/prometheus/prometheus" || $$2 == "github.com/prometheus/prometheus") {print $$NF; exit}' tools/prometheus/go.mod)
PROMTOOL             = $(TOOLS_BIN)/promtool-$(PROMETHEUS_MODULE_VERSION)/promtool

## alerts: the shipped Prometheus alerting rules (deploy/alerts): promtool
## check rules, then their unit tests, promtool test rules (every alert
## firing and not firing)
alerts: $(PROMTOOL)
	$(PROMTOOL) check rules deploy/alerts/kretrieve.rules.yaml
	cd deploy/alerts && $(PROMTOOL) test rules kretrieve.rules.test.yaml

## tools: the pinned staticcheck, govulncheck and promtool in TOOLS_BIN
tools: $(STATICCHECK) $(GOVULNCHECK) $(PROMTOOL)

$(PROMTOOL):
	cd tools/prometheus && GOWORK=off CGO_ENABLED=0 GOBIN=$(dir $@) $(GO) install -mod=readonly -trimpath github.com/prometheus/prometheus/cmd/promtool

$(STATICCHECK):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOVULNCHECK):
	GOBIN=$(dir $@) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)

$(BENCHSTAT):
	GOBIN=$(dir $@) $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

## run: the all-in-one demo: embedded broker, workers, REQUESTS requests, summary
run:
	$(GO) run ./cmd/kretrieve run --requests $(REQUESTS)

BENCH_OUT    ?= bench.out
BENCH_ROUNDS ?= 3
# PACED_VARIANTS are BenchmarkPipelinePaced's variants. Each runs in a
# process of its own, in turn first and second from round to round: inside
# one process the variant that ran first measured a higher p99.
PACED_VARIANTS = kafka-traced-1 kafka-traced-1-nopathways

## bench-ab: make bench's relay and pipeline rows, A/B between the commit
## BASE and the working tree in one run (tools/bench-ab.sh): test binaries
## of both, run in turn BENCH_ROUNDS times, compared by benchstat; the
## comparison goes to BENCH_AB_OUT. Use it to show a change costs nothing.
BASE         ?= HEAD
BENCH_AB_OUT ?= bench-ab.out
bench-ab: $(BENCHSTAT)
	tools/bench-ab.sh $(BASE) $(BENCHSTAT) $(BENCH_ROUNDS) $(BENCH_AB_OUT)

## bench: the hot paths' micro-benchmarks (-benchmem), then BENCH_ROUNDS rounds
## of the relay, paced relay, peers (bench/peers: the relay against kotel and Datadog's
## Data Streams, broker out of process), pipeline, paced pipeline and idle latency benchmarks (each
## round runs every variant side by side; the paced pipeline's two each in its own
## process, their order alternating from round to round), all saved to BENCH_OUT; then the
## performance targets from the medians (bench/benchratio). See bench/doc.go.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem $$($(GO) list ./... | grep -v -e '/bench$$' -e '/pipeline$$') 2>&1 | tee $(BENCH_OUT)
	for i in $$(seq $(BENCH_ROUNDS)); do \
		$(GO) test -run='^$$' -bench='^BenchmarkRelay$$' -benchtime=20000x ./bench/ 2>&1 | tee -a $(BENCH_OUT); \
		$(GO) test -run='^$$' -bench='^BenchmarkRelayPaced$$' -benchtime=10000x ./bench/ 2>&1 | tee -a $(BENCH_OUT); \
		(cd bench/peers && $(GO) test -run='^$$' -bench='^BenchmarkPeers$$' -benchtime=20000x .) 2>&1 | tee -a $(BENCH_OUT); \
		$(GO) test -run='^$$' -bench='^BenchmarkPipeline$$' -benchtime=3000x ./pipeline/ 2>&1 | tee -a $(BENCH_OUT); \
		for v in $$(if [ $$((i % 2)) = 1 ]; then echo $(PACED_VARIANTS); else echo $(PACED_VARIANTS) | tr ' ' '\n' | tac; fi); do \
			$(GO) test -run='^$$' -bench="^BenchmarkPipelinePaced\$$/^$$v\$$" -benchtime=1000x ./pipeline/ 2>&1 | tee -a $(BENCH_OUT); \
		done; \
		$(GO) test -run='^$$' -bench='^BenchmarkIdleLatency$$' -benchtime=300x ./pipeline/ 2>&1 | tee -a $(BENCH_OUT); \
	done
	$(GO) run ./bench/benchratio $(BENCH_OUT)

## fuzz: each fuzz target of every package briefly (FUZZTIME each).
## FUZZTIME is an execution count (Nx) by default: with a duration, Go 1.26's
## fuzz coordinator can fail a target with a bare "context deadline exceeded"
## when the time runs out under CPU contention, having found nothing
## (golang/go#75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME ?= 10000x
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "$$pkg $$t"; \
			$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# The image's binary is cross-compiled for linux/IMAGE_ARCH whatever the host
# (a macOS host used to package a darwin binary); IMAGE_ARCH defaults to the
# host's architecture. An IMAGE_ARCH other than the Docker engine's is passed
# as --platform to BuildKit through buildx (see BUILDX_VERSION): the legacy
# builder cannot build a foreign-platform image FROM scratch.
# CA_BUNDLE is the host's CA certificates (Debian, Alpine, Fedora through its
# compat link, macOS).
IMAGE_ARCH  ?= $(shell $(GO) env GOARCH)
CA_BUNDLE   ?= $(firstword $(wildcard /etc/ssl/certs/ca-certificates.crt /etc/ssl/cert.pem))

# IMAGE_CONTEXT is where image-context stages the build context;
# IMAGE_BINARY, when set, is a linux/IMAGE_ARCH kretrieve binary to stage
# instead of building one (make release stages its release binaries).
IMAGE_CONTEXT ?= build/image
IMAGE_BINARY  ?=

## image-context: the image's build context for linux/IMAGE_ARCH in
## IMAGE_CONTEXT (no Docker): the Dockerfile and every file it copies: the
## binary, the CA bundle and the demo corpus (go-stdlib.jsonl: the Go
## standard library docs of this host's Go, which the ingest Job publishes;
## the image has no Go toolchain). Both `make image` (docker build) and
## `make release` (tools/release, multi-arch) build the image from it, so
## the two are one definition.
image-context:
	@[ -n "$(CA_BUNDLE)" ] || { echo "make image: no CA bundle found; set CA_BUNDLE=/path/to/ca-certificates.pem"; exit 1; }
	rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)
	if [ -n "$(IMAGE_BINARY)" ]; then cp $(IMAGE_BINARY) $(IMAGE_CONTEXT)/kretrieve; else \
		CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -o $(IMAGE_CONTEXT)/kretrieve ./cmd/kretrieve; fi
	$(GO) run ./corpus/democorpus -o $(IMAGE_CONTEXT)/go-stdlib.jsonl
	cp Dockerfile $(IMAGE_CONTEXT)/
	cp $(CA_BUNDLE) $(IMAGE_CONTEXT)/ca-certificates.crt

## image: the kretrieve image FROM scratch for linux/IMAGE_ARCH (needs a Docker engine)
image: image-context
	@engine="$$(docker version -f '{{.Server.Arch}}' 2>/dev/null)"; \
	if [ "$$engine" = "$(IMAGE_ARCH)" ]; then docker build -q -t $(IMAGE) $(IMAGE_CONTEXT); exit; fi; \
	if docker buildx version >/dev/null 2>&1; then buildx="docker buildx"; else buildx=$(BUILDX_TOOL); \
		[ -x $$buildx ] || GOBIN=$(dir $(BUILDX_TOOL)) $(GO) install github.com/docker/buildx/cmd/buildx@$(BUILDX_VERSION) || exit; fi; \
	echo "$$buildx build --platform linux/$(IMAGE_ARCH) --load -t $(IMAGE) $(IMAGE_CONTEXT) (engine: $${engine:-unknown})"; \
	$$buildx build -q --platform linux/$(IMAGE_ARCH) --load -t $(IMAGE) $(IMAGE_CONTEXT)

## release: the release in DIST (default dist/) for VERSION (default: git
## describe): kretrieve archives for linux, darwin and windows on amd64 and
## arm64, a CycloneDX SBOM for each, a multi-arch OCI image layout tarball
## and SHA256SUMS, all reproducible (tools/release/release.sh; no Docker).
## release-check: builds it twice and compares them, and checks the image
## (tools/release's tests, a few minutes).
VERSION ?= $(shell git describe --tags --always --dirty)
DIST    ?= dist
release:
	VERSION=$(VERSION) DIST=$(DIST) GO=$(GO) CA_BUNDLE=$(CA_BUNDLE) tools/release/release.sh

release-check:
	cd tools/release && GOWORK=off $(GO) test -count=1 -v -timeout 20m ./...

## jaeger-image: Jaeger v2 built from its Go module, FROM scratch
jaeger-image:
	JAEGER_IMAGE_TAG=$(JAEGER_IMAGE) tools/jaeger/build.sh

## otelcol-image: the compose stack's collector, built by the Collector Builder
## from tools/otelcol/manifest.yaml, FROM scratch
otelcol-image:
	OTELCOL_IMAGE_TAG=$(OTELCOL_IMAGE) tools/otelcol/build.sh

## prometheus-image: Prometheus built from its Go module, FROM scratch
prometheus-image:
	PROMETHEUS_IMAGE_TAG=$(PROMETHEUS_IMAGE) tools/prometheus/build.sh

## integration: the testcontainers tier, its own module integration/ (needs a Docker engine; see README)
## KAFKA_IMAGE=apache/kafka:4.1.1 runs it against real Kafka; JAEGER_IMAGE=jaegertracing/jaeger:2.13.0 uses upstream Jaeger.
integration:
	@docker info >/dev/null 2>&1 || { echo "make integration: no Docker engine is reachable. Start one, e.g.:"; \
		echo "  apt-get install -y docker.io && (dockerd --iptables=false >/tmp/dockerd.log 2>&1 &)"; \
		echo "  then wait for /var/run/docker.sock and run make integration again."; exit 1; }
	$(MAKE) image
	@if [ "$(JAEGER_IMAGE)" = "kretrieve/jaeger:local" ]; then $(MAKE) jaeger-image; fi
	$(MAKE) otelcol-image prometheus-image
	cd integration && TESTCONTAINERS_RYUK_DISABLED=true KRETRIEVE_IMAGE=$(IMAGE) JAEGER_IMAGE=$(JAEGER_IMAGE) \
		OTELCOL_IMAGE=$(OTELCOL_IMAGE) PROMETHEUS_IMAGE=$(PROMETHEUS_IMAGE) \
		$(GO) test -tags integration -count=1 -timeout 20m -v ./...

## up / down: the whole stack with Docker Compose (needs internet for upstream images)
up: image
	docker compose up -d

down:
	docker compose down -v

clean:
	rm -rf bin build/image dist
