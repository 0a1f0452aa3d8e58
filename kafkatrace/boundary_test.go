// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracecontext"
)

const (
	outsideTraceID = "0af7651916cd43dd8448eb211c80319c"
	outsideSpanID  = "b7ad6b7169203331"
)

// outsideRecord is a record from a producer outside the system: sampled
// (or not) trace context, tracestate and baggage.
func outsideRecord(flags string) *kgo.Record {
	return &kgo.Record{Topic: "retrieval.requests", Timestamp: time.Now(), Value: []byte("{}"),
		Headers: headersOf("00-"+outsideTraceID+"-"+outsideSpanID+"-"+flags, "vendor=abc", "tenant=acme,secret=hunter2,plan=pro")}
}

func TestTrustBoundaryIgnoresInboundSampledFlag(t *testing.T) {
	never := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))
	t.Run("without: the outside producer forces sampling", func(t *testing.T) {
		tr, rec := newSampledTracer(t, never, WithParentBasedSampling())
		ctx, span, qw := tr.StartProcess(context.Background(), outsideRecord("01"), -1)
		tr.EndProcess(ctx, outsideRecord("01"), qw.End, span, nil, "")
		if len(rec.Ended()) != 2 {
			t.Fatalf("%d spans, want the wait and process spans the flag forces", len(rec.Ended()))
		}
	})
	t.Run("with: our sampler decides", func(t *testing.T) {
		for _, parentBased := range []bool{false, true} {
			opts := []Option{WithTrustBoundary()}
			if parentBased {
				opts = append(opts, WithParentBasedSampling())
			}
			tr, rec := newSampledTracer(t, never, opts...)
			r := outsideRecord("01")
			ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
			sc := trace.SpanContextFromContext(ctx)
			if span.IsRecording() || sc.IsSampled() {
				t.Fatalf("parent-based %v: sampled=01 from outside was obeyed under a ratio-0 sampler", parentBased)
			}
			if !sc.IsValid() || sc.TraceID().String() == outsideTraceID || sc.IsRemote() {
				t.Fatalf("parent-based %v: handler context %v, want a new local root", parentBased, sc)
			}
			// Downstream records carry our unsampled root, not the
			// outside context.
			out := &kgo.Record{Topic: "retrieval.candidates", Context: ctx}
			tr.OnProduceRecordBuffered(out)
			tr.OnProduceRecordUnbuffered(out, nil)
			if got := (tracecontext.HeaderCarrier{Record: out}).Get("traceparent"); !strings.HasPrefix(got, "00-"+sc.TraceID().String()+"-") || !strings.HasSuffix(got, "-00") {
				t.Fatalf("downstream traceparent %q, want our unsampled trace %s", got, sc.TraceID())
			}
			tr.EndProcess(ctx, r, qw.End, span, nil, "")
			if n := len(rec.Ended()); n != 0 {
				t.Fatalf("parent-based %v: %d spans recorded", parentBased, n)
			}
		}
	})
	t.Run("with: an unsampled outside flag does not suppress our sampling", func(t *testing.T) {
		tr, rec := newSampledTracer(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), WithTrustBoundary(), WithParentBasedSampling())
		r := outsideRecord("00")
		ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
		tr.EndProcess(ctx, r, qw.End, span, nil, "")
		if len(rec.Ended()) != 2 {
			t.Fatalf("%d spans: the parent-based fast path trusted the outside flag", len(rec.Ended()))
		}
	})
}

func TestTrustBoundaryLinksNotParents(t *testing.T) {
	tr, rec := newSampledTracer(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), WithTrustBoundary(), WithConsumerGroup("retrieval"))
	r := outsideRecord("01")
	ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
	tr.EndProcess(ctx, r, qw.End, span, nil, "")

	wait, process := rec.Ended()[0], rec.Ended()[1]
	if process.Parent().IsValid() {
		t.Fatalf("process span parented by %v, want a root", process.Parent())
	}
	if process.SpanContext().TraceID().String() == outsideTraceID {
		t.Fatal("process span continues the outside trace")
	}
	if ls := process.Links(); len(ls) != 1 || ls[0].SpanContext.TraceID().String() != outsideTraceID || ls[0].SpanContext.SpanID().String() != outsideSpanID {
		t.Fatalf("links %v, want the outside context", ls)
	}
	if process.SpanContext().TraceState().Len() != 0 {
		t.Fatalf("outside tracestate %q carried into our trace", process.SpanContext().TraceState())
	}
	if wait.Parent().SpanID() != process.SpanContext().SpanID() || wait.SpanContext().TraceID() != process.SpanContext().TraceID() {
		t.Fatal("the wait span must be the process span's child, in our trace")
	}
	wantAttrs(t, process, map[string]any{"messaging.consumer.group.name": "retrieval", "messaging.operation.name": "process"})
	if _, ok := attrMap(process.Attributes())[string(otelnames.TraceContextInvalid)]; ok {
		t.Fatal("a valid outside context marked invalid")
	}
}

func TestTrustBoundaryDropsBaggageUnlessAllowed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed []string
		want    string
	}{
		{"none allowed", nil, ""},
		{"tenant allowed", []string{"tenant"}, "tenant=acme"},
		{"allowed key absent", []string{"region"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newSampledTracer(t, sdktrace.AlwaysSample(), WithTrustBoundary(tc.allowed...))
			r := outsideRecord("01")
			ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
			if got := baggage.FromContext(ctx).String(); got != tc.want {
				t.Fatalf("handler baggage %q, want %q", got, tc.want)
			}
			out := &kgo.Record{Topic: "retrieval.candidates", Context: ctx}
			tr.OnProduceRecordBuffered(out)
			tr.OnProduceRecordUnbuffered(out, nil)
			if got := (tracecontext.HeaderCarrier{Record: out}).Get("baggage"); got != tc.want {
				t.Fatalf("downstream baggage %q, want %q", got, tc.want)
			}
			tr.EndProcess(ctx, r, qw.End, span, nil, "")
		})
	}
}

// TestBaggageNeverBecomesAttributes: without an allow-list no span carries
// any baggage member; with one, only the listed members, prefixed.
func TestBaggageNeverBecomesAttributes(t *testing.T) {
	spanValues := func(spans []sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, s := range spans {
			for _, kv := range s.Attributes() {
				m[string(kv.Key)] = kv.Value.String()
			}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want map[string]string // baggage attributes on the process span
	}{
		{"default", nil, nil},
		{"allow-listed", []Option{WithBaggageAttributes("tenant", "region")}, map[string]string{"kretrieve.baggage.tenant": "acme"}},
		{"allow-listed but not trusted at the boundary", []Option{WithBaggageAttributes("tenant"), WithTrustBoundary("plan")}, nil},
		{"allow-listed and trusted", []Option{WithBaggageAttributes("tenant", "plan"), WithTrustBoundary("plan")}, map[string]string{"kretrieve.baggage.plan": "pro"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, rec := newSampledTracer(t, sdktrace.AlwaysSample(), tc.opts...)
			r := outsideRecord("01")
			ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
			out := &kgo.Record{Topic: "retrieval.candidates", Context: ctx}
			tr.OnProduceRecordBuffered(out)
			tr.OnProduceRecordUnbuffered(out, nil)
			tr.EndProcess(ctx, r, qw.End, span, nil, "")

			got := spanValues(rec.Ended())
			for k, v := range got {
				if strings.HasPrefix(k, otelnames.BaggagePrefix) {
					if tc.want[k] != v {
						t.Errorf("attribute %s=%q not allow-listed", k, v)
					}
					continue
				}
				for _, secret := range []string{"hunter2", "acme", "secret", "tenant"} {
					if strings.Contains(k, secret) || strings.Contains(v, secret) {
						t.Errorf("baggage leaked into attribute %s=%q", k, v)
					}
				}
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("attribute %s=%q, want %q", k, got[k], v)
				}
			}
		})
	}
}
