// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"go.opentelemetry.io/otel/propagation"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// headerValues returns the values of r's headers named key, in order.
func headerValues(r *kgo.Record, key string) []string {
	return HeaderCarrier{Record: r}.GetAll(key)
}

func TestHeaderCarrierSetReplacesAllDuplicates(t *testing.T) {
	r := &kgo.Record{Headers: []kgo.RecordHeader{
		{Key: "traceparent", Value: []byte("old-1")},
		{Key: "app", Value: []byte("keep")},
		{Key: "traceparent", Value: []byte("old-2")},
	}}
	HeaderCarrier{Record: r}.Set("traceparent", "new")
	if got := headerValues(r, "traceparent"); len(got) != 1 || got[0] != "new" {
		t.Fatalf("traceparent headers = %q, want exactly [new]", got)
	}
	if got := headerValues(r, "app"); len(got) != 1 || got[0] != "keep" {
		t.Fatalf("unrelated header lost: %q", got)
	}
}

func TestHeaderCarrierGetLastWins(t *testing.T) {
	r := &kgo.Record{Headers: []kgo.RecordHeader{
		{Key: "k", Value: []byte("first")},
		{Key: "k", Value: []byte("last")},
	}}
	c := HeaderCarrier{Record: r}
	if got := c.Get("k"); got != "last" {
		t.Fatalf("Get = %q, want last", got)
	}
	if got := c.Get("missing"); got != "" {
		t.Fatalf("Get(missing) = %q", got)
	}
	if keys := c.Keys(); len(keys) != 2 {
		t.Fatalf("Keys = %q", keys)
	}
}

// TestHeaderCarrierRemove: Remove deletes every header with one of the
// keys, keeps the others in order in the same backing array, and clears
// the slots it frees.
func TestHeaderCarrierRemove(t *testing.T) {
	hs := []kgo.RecordHeader{
		{Key: "traceparent", Value: []byte("a")},
		{Key: "app", Value: []byte("1")},
		{Key: "baggage", Value: []byte("b")},
		{Key: "traceparent", Value: []byte("c")},
		{Key: "other", Value: []byte("2")},
	}
	r := &kgo.Record{Headers: hs}
	HeaderCarrier{Record: r}.Remove(TraceparentHeader, BaggageHeader)
	if keys := (HeaderCarrier{Record: r}).Keys(); !slices.Equal(keys, []string{"app", "other"}) {
		t.Fatalf("Keys = %q, want [app other]", keys)
	}
	if &r.Headers[0] != &hs[0] {
		t.Fatal("Remove reallocated the headers")
	}
	for i, h := range hs[len(r.Headers):] {
		if h.Key != "" || h.Value != nil {
			t.Fatalf("freed slot %d not cleared: %+v", i, h)
		}
	}
	HeaderCarrier{Record: r}.Remove()
	if len(r.Headers) != 2 {
		t.Fatalf("Remove() with no keys removed headers: %v", r.Headers)
	}
}

// TestHeaderCarrierGetAndRemoveAllocateNothing: the carrier is used on
// every produced and consumed record; reading and removing headers, and
// passing it as a TextMapCarrier, allocate nothing.
func TestHeaderCarrierGetAndRemoveAllocateNothing(t *testing.T) {
	r := &kgo.Record{Headers: []kgo.RecordHeader{
		{Key: "app", Value: []byte("1")},
		{Key: TraceparentHeader, Value: []byte("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")},
	}}
	keys := []string{TracestateHeader, BaggageHeader}
	var sink string
	allocs := testing.AllocsPerRun(100, func() {
		var c interface{ Get(string) string } = HeaderCarrier{Record: r}
		sink = c.Get(TraceparentHeader)
		HeaderCarrier{Record: r}.Remove(keys...)
	})
	if allocs != 0 || sink == "" {
		t.Fatalf("%v allocations per Get and Remove (value %q), want 0", allocs, sink)
	}
}

// BenchmarkHeaderCarrier measures the carrier on a record with a few
// headers, the trace headers last.
func BenchmarkHeaderCarrier(b *testing.B) {
	headers := []kgo.RecordHeader{
		{Key: "content-type", Value: []byte("application/json")},
		{Key: "correlation-id", Value: []byte("c-1")},
		{Key: TraceparentHeader, Value: []byte("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")},
		{Key: TracestateHeader, Value: []byte("vendor=1")},
	}
	b.Run("get", func(b *testing.B) {
		c := HeaderCarrier{Record: &kgo.Record{Headers: headers}}
		b.ReportAllocs()
		for b.Loop() {
			if c.Get(TraceparentHeader) == "" {
				b.Fatal("no traceparent")
			}
		}
	})
	b.Run("remove", func(b *testing.B) {
		r := &kgo.Record{Headers: make([]kgo.RecordHeader, 0, len(headers))}
		keys := []string{TraceparentHeader, TracestateHeader, BaggageHeader}
		b.ReportAllocs()
		for b.Loop() {
			r.Headers = append(r.Headers[:0], headers...)
			HeaderCarrier{Record: r}.Remove(keys...)
		}
	})
}

// TestHeaderCarrierIsNoValuesGetter: the propagators read a carrier that
// is a propagation.ValuesGetter through Values, joining every duplicate
// header; HeaderCarrier must offer them only Get, the last one.
func TestHeaderCarrierIsNoValuesGetter(t *testing.T) {
	var c any = HeaderCarrier{Record: &kgo.Record{}}
	if _, ok := c.(propagation.ValuesGetter); ok {
		t.Fatal("HeaderCarrier is a propagation.ValuesGetter: duplicate headers would bypass the W3C limits")
	}
}
