// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"github.com/kretrieve/kretrieve/tracecontext"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// headerValues returns the values of r's headers named key, in order.
func headerValues(r *kgo.Record, key string) []string {
	return tracecontext.HeaderCarrier{Record: r}.GetAll(key)
}

func testPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

func TestInjectReplacesStaleTraceHeaders(t *testing.T) {
	tr := New(WithPropagator(testPropagator()))
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3},
		SpanID:     trace.SpanID{4, 5, 6},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	m, _ := baggage.NewMember("tenant", "a")
	b, _ := baggage.New(m)
	ctx = baggage.ContextWithBaggage(ctx, b)

	r := &kgo.Record{Headers: []kgo.RecordHeader{
		{Key: "traceparent", Value: []byte("00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01")},
		{Key: "tracestate", Value: []byte("stale=1")},
		{Key: "baggage", Value: []byte("old=1")},
		{Key: "baggage", Value: []byte("older=1")},
		{Key: "content-type", Value: []byte("application/json")},
	}}
	tr.Inject(ctx, r)

	if got := headerValues(r, "traceparent"); len(got) != 1 || got[0] != "00-01020300000000000000000000000000-0405060000000000-01" {
		t.Fatalf("traceparent = %q", got)
	}
	if got := headerValues(r, "tracestate"); len(got) != 0 {
		t.Fatalf("stale tracestate kept: %q", got)
	}
	if got := headerValues(r, "baggage"); len(got) != 1 || got[0] != "tenant=a" {
		t.Fatalf("baggage = %q", got)
	}
	if got := headerValues(r, "content-type"); len(got) != 1 {
		t.Fatalf("unrelated header lost: %v", r.Headers)
	}
	// Round trip.
	got := trace.SpanContextFromContext(tr.Extract(context.Background(), r))
	if got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || !got.IsRemote() {
		t.Fatalf("extracted %v, want %v", got, sc)
	}
}

func TestExtractMalformedHeadersGiveNoParent(t *testing.T) {
	tr := New(WithPropagator(testPropagator()))
	for name, tp := range map[string]string{
		"version ff":     "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"zero trace id":  "00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"zero span id":   "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"uppercase hex":  "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
		"short trace id": "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
		"garbage":        "not a traceparent",
		"empty":          "",
		"missing flags":  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
		"non-hex trace":  "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",
		"extra for v00":  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
	} {
		t.Run(name, func(t *testing.T) {
			r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte(tp)}}}
			if sc := trace.SpanContextFromContext(tr.Extract(context.Background(), r)); sc.IsValid() {
				t.Fatalf("extracted a valid span context %v from %q", sc, tp)
			}
		})
	}
}
