// SPDX-License-Identifier: Apache-2.0

package spans_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestStore checks the in-process SDK store: it keeps nothing while off,
// the spans of its traces in start order while on, and drops them on Stop.
func TestStore(t *testing.T) {
	store := spans.NewStore()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store)).Tracer("t")
	base := time.Now()
	record := func() string {
		ctx, root := tr.Start(context.Background(), "request", trace.WithTimestamp(base))
		_, child := tr.Start(ctx, "search", trace.WithTimestamp(base.Add(time.Millisecond)))
		child.End(trace.WithTimestamp(base.Add(2 * time.Millisecond)))
		root.End(trace.WithTimestamp(base.Add(3 * time.Millisecond)))
		return root.SpanContext().TraceID().String()
	}
	ctx := context.Background()
	off := record()
	if got, err := store.Trace(ctx, off); err != nil || len(got) != 0 || len(store.Traces()) != 0 {
		t.Fatalf("off: kept %d spans, %d traces (%v)", len(got), len(store.Traces()), err)
	}
	store.Start()
	on := record()
	got, err := store.Trace(ctx, on)
	if err != nil || len(got) != 2 || got[0].Name != "request" || got[1].Name != "search" || got[1].ParentSpanID != got[0].SpanID {
		t.Fatalf("on: %+v (%v)", got, err)
	}
	if ts := store.Traces(); len(ts) != 1 || ts[0].TraceID != on || len(ts[0].Spans) != 2 {
		t.Fatalf("traces %+v", ts)
	}
	if got, err := store.Trace(ctx, "not a trace id"); err != nil || len(got) != 0 {
		t.Fatalf("bad id: %+v (%v)", got, err)
	}
	store.Stop()
	if got, _ := store.Trace(ctx, on); len(got) != 0 || len(store.Traces()) != 0 {
		t.Fatalf("stopped: kept %d spans", len(got))
	}
}

func TestTracesSource(t *testing.T) {
	ts := spans.Traces{{TraceID: "a", Spans: []spans.Span{{TraceID: "a", SpanID: "1"}}}, {TraceID: "b"}}
	if got, err := ts.Trace(context.Background(), "a"); err != nil || len(got) != 1 || got[0].SpanID != "1" {
		t.Fatalf("a: %+v (%v)", got, err)
	}
	if got, err := ts.Trace(context.Background(), "c"); err != nil || got != nil {
		t.Fatalf("unknown: %+v (%v)", got, err)
	}
	f := spans.TracesFunc(func() []spans.Trace { return ts })
	if got, err := f.Trace(context.Background(), "a"); err != nil || len(got) != 1 || got[0].SpanID != "1" {
		t.Fatalf("func a: %+v (%v)", got, err)
	}
}

// TestJaeger checks the Jaeger client against a fake query API: a trace,
// a service's traces, a trace not there yet and a failing API.
func TestJaeger(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RequestURI())
		switch {
		case r.URL.Path == "/api/traces/missing":
			http.NotFound(w, r)
		case r.URL.Path == "/api/traces/broken":
			http.Error(w, "down", http.StatusInternalServerError)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{
				"traceID":   "a",
				"processes": map[string]any{"p1": map[string]any{"serviceName": "svc"}},
				"spans": []any{map[string]any{"traceID": "a", "spanID": "1", "operationName": "request", "processID": "p1",
					"startTime": 10, "duration": 5, "tags": []any{map[string]any{"key": "span.kind", "type": "string", "value": "client"}}}},
			}}})
		}
	}))
	defer srv.Close()
	j := spans.Jaeger{URL: srv.URL + "/", Client: srv.Client()}
	ctx := context.Background()
	got, err := j.Trace(ctx, "a")
	if err != nil || len(got) != 1 || got[0].Name != "request" || got[0].Kind != "client" || got[0].Service != "svc" || got[0].EndTimeUnixNano != 15_000 {
		t.Fatalf("trace: %+v (%v)", got, err)
	}
	if got, err := j.ServiceTraces(ctx, "svc", 7); err != nil || len(got) != 1 {
		t.Fatalf("service traces: %+v (%v)", got, err)
	}
	if got, err := j.Trace(ctx, "missing"); err != nil || got != nil {
		t.Fatalf("missing: %+v (%v)", got, err)
	}
	if _, err := j.Trace(ctx, "broken"); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("broken: %v", err)
	}
	want := []string{"/api/traces/a", "/api/traces?limit=7&service=svc", "/api/traces/missing", "/api/traces/broken"}
	if strings.Join(queries, " ") != strings.Join(want, " ") {
		t.Fatalf("queries %v, want %v", queries, want)
	}
}
