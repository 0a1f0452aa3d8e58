// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pipeline"
)

// startCounter counts the spans its tracers are asked to start, sampled
// or not.
type startCounter struct {
	trace.TracerProvider
	starts *atomic.Int64
}

func (p startCounter) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return countingTracer{p.TracerProvider.Tracer(name, opts...), p.starts}
}

type countingTracer struct {
	trace.Tracer
	starts *atomic.Int64
}

func (t countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.starts.Add(1)
	return t.Tracer.Start(ctx, name, opts...)
}

// TestPipelineTracerKeepsSettings: the tracer of a client outside the
// pipeline (kretrieve dlq replay's) keeps the workers' parent-based
// sampling (an unsampled record starts no span at all) and baggage
// attributes, the two settings a hand-built tracer lost.
func TestPipelineTracerKeepsSettings(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())), sdktrace.WithSpanProcessor(rec))
	var starts atomic.Int64
	cfg := pipeline.Config{
		Kafka:               kafkaclient.Config{Brokers: []string{"127.0.0.1:9092"}},
		ParentBasedSampling: true,
		BaggageAttributes:   []string{"tenant"},
	}
	tr := mustNew(t, cfg, pipeline.WithTracerProvider(startCounter{sdk, &starts}),
		pipeline.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))).Tracer("replay")
	if tr.ConsumerGroup() != "replay" {
		t.Fatalf("group %q", tr.ConsumerGroup())
	}
	consume := func(traceparent string) {
		r := &kgo.Record{Topic: "retrieval.requests.dlq", Timestamp: time.Now(), Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte(traceparent)}, {Key: "baggage", Value: []byte("tenant=acme,secret=x")},
		}}
		ctx, span, _ := tr.StartProcess(t.Context(), r, -1)
		tr.EndProcess(ctx, r, time.Now(), span, nil, "")
	}

	consume("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
	if n := starts.Load(); n != 0 {
		t.Fatalf("an unsampled record started %d spans: parent-based sampling lost", n)
	}
	consume("00-0af7651916cd43dd8448eb211c80319d-b7ad6b7169203331-01")
	var process sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindConsumer {
			process = s
		}
	}
	if process == nil {
		t.Fatalf("no process span among %d ended", len(rec.Ended()))
	}
	var tenant string
	for _, a := range process.Attributes() {
		switch string(a.Key) {
		case otelnames.BaggagePrefix + "tenant":
			tenant = a.Value.AsString()
		case otelnames.BaggagePrefix + "secret":
			t.Errorf("baggage key not listed became an attribute: %v", a)
		}
	}
	if tenant != "acme" {
		t.Fatalf("%s = %q, want acme: baggage attributes lost (attributes %v)", otelnames.BaggagePrefix+"tenant", tenant, process.Attributes())
	}
}
