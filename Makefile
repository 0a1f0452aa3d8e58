# kretrieve developer targets. `make test` is what CI runs (see .ci/run).
GO       ?= go
BIN      ?= bin/kretrieve
REQUESTS ?= 1000

.PHONY: all build test lint run bench fuzz clean

all: lint test build

## build: the kretrieve binary (static) in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/kretrieve

## test: every test, with the race detector (needs no Docker)
test:
	$(GO) test -race -count=1 ./...

## lint: gofmt and go vet
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

## run: the all-in-one demo: embedded broker, workers, REQUESTS requests, summary
run:
	$(GO) run ./cmd/kretrieve run --requests $(REQUESTS)

## bench: encode/decode and tracing benchmarks
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## fuzz: each fuzz target briefly
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./messages/ | grep '^Fuzz'); do \
		$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=10s ./messages/ || exit 1; \
	done

clean:
	rm -rf bin
