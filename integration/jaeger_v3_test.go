// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestJaegerAPIv3 sends the spans of two Kafka hops, recorded by kafkatrace
// as the stages record them (one processed with an error), to Jaeger 2.13
// over OTLP (otlpwire, kretrieve's http/protobuf exporter) and reads them back through spans.Jaeger, the api_v3 client of
// kretrieve conformance and trace: by trace ID and by service, with their
// kinds, parents, links, status and service names, conforming to the
// messaging conventions.
func TestJaegerAPIv3(t *testing.T) {
	j := startJaegerInstance(t)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(j.otlpHTTP) + "/v1/traces"
	provider := func(service string) *sdktrace.TracerProvider {
		exp, err := otlpwire.New(otlpwire.Config{EndpointURL: endpoint})
		if err != nil {
			t.Fatal(err)
		}
		return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))))
	}
	gp, wp := provider("kretrieve-gateway"), provider("kretrieve-retrieve")
	prop := propagation.TraceContext{}
	m := kafkatrace.NewMetrics()
	gw := kafkatrace.New(kafkatrace.WithTracerProvider(gp), kafkatrace.WithPropagator(prop), kafkatrace.WithMetrics(m), kafkatrace.WithPathways("gateway"))
	wk := kafkatrace.New(kafkatrace.WithTracerProvider(wp), kafkatrace.WithPropagator(prop), kafkatrace.WithMetrics(m),
		kafkatrace.WithPathways("retrieve"), kafkatrace.WithConsumerGroup("kretrieve-retrieve"))
	var ids []string
	for i, perr := range []error{nil, errors.New("index unavailable")} {
		out := &kgo.Record{Topic: "retrieval.requests", Key: []byte("k"), Value: []byte("q")}
		gw.OnProduceRecordBuffered(out)
		out.Partition, out.Offset = 0, int64(i)
		gw.OnProduceRecordUnbuffered(out, nil)
		in := &kgo.Record{Topic: out.Topic, Offset: out.Offset, Key: out.Key, Value: out.Value, Headers: out.Headers, Timestamp: time.Now()}
		ctx, span, qw := wk.StartProcess(context.Background(), in, 10)
		reason := ""
		if perr != nil {
			reason = "handler_error"
		}
		wk.EndProcess(ctx, in, qw.End, span, perr, reason)
		ids = append(ids, span.SpanContext().TraceID().String())
	}
	for _, p := range []*sdktrace.TracerProvider{gp, wp} {
		if err := p.Shutdown(context.Background()); err != nil { // the syncer exported each span as it ended
			t.Fatal(err)
		}
	}

	jaeger := spans.Jaeger{URL: j.queryURL, Client: httpClient}
	var got []spans.Span
	poll.Until(t, 30*time.Second, func() bool {
		var err error
		got, err = jaeger.Trace(t.Context(), ids[1])
		return err == nil && len(got) == 3
	}, "trace %s: %d spans in Jaeger, want 3", ids[1], len(got))
	byName := map[string]spans.Span{}
	for _, s := range got {
		byName[s.Name] = s
	}
	send, wait, process := byName["send retrieval.requests"], byName["wait retrieval.requests"], byName["process retrieval.requests"]
	if send.Kind != "producer" || send.Service != "kretrieve-gateway" || wait.ParentSpanID != send.SpanID || wait.Service != "kretrieve-retrieve" ||
		process.Kind != "consumer" || process.ParentSpanID != send.SpanID || len(process.Links) != 1 || process.Links[0].SpanID != send.SpanID ||
		process.StatusCode != "error" || process.StatusMessage != "index unavailable" {
		t.Fatalf("spans from api_v3: %+v", got)
	}
	var all []spans.Span
	poll.Until(t, 30*time.Second, func() bool {
		var err error
		all, err = jaeger.ServiceTraces(t.Context(), "kretrieve-retrieve", 10)
		return err == nil && len(all) == 6
	}, "service search: %d spans, want the 6 of both traces", len(all))
	if v := conformance.Check(all, conformance.Default()); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
	if none, err := jaeger.Trace(t.Context(), "0123456789abcdef0123456789abcdef"); err != nil || none != nil {
		t.Fatalf("unknown trace: %+v (%v)", none, err)
	}
	t.Logf("api_v3: trace %s has %d spans; service kretrieve-retrieve %d spans; 0 violations", ids[1], len(got), len(all))
}
