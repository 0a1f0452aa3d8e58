// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/corpus/corpustest"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

// harness is an in-process pipeline on kfake with in-memory telemetry.
type harness struct {
	t   *testing.T
	cfg pipeline.Config
	// The pipeline's collaborators (pipeline.New's options): tracers,
	// meters, prop and logger default to the in-memory ones and a quiet
	// logger; tests that export over OTLP replace them.
	tracers trace.TracerProvider
	meters  metric.MeterProvider
	prop    propagation.TextMapPropagator
	logger  *slog.Logger
	metrics *kafkatrace.Metrics
	spans   *tracetest.SpanRecorder
	tp      *sdktrace.TracerProvider
	reader  *sdkmetric.ManualReader
	idx     *search.Index
	// clusterID is given to every pipeline (SetKafkaClusterID) when set.
	clusterID string
}

func newHarness(t *testing.T, partitions int) *harness {
	t.Helper()
	return newHarnessOn(t, brokertest.NewBroker(t, partitions).Addr(), partitions)
}

// newHarnessOn is newHarness against the broker at addr.
func newHarnessOn(t *testing.T, addr string, partitions int) *harness {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	metrics := kafkatrace.NewMetrics()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(metrics)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	idx, err := corpustest.DemoIndex()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	h := &harness{
		t:     t,
		spans: spans, tp: tp, reader: reader, idx: idx,
		tracers: tp, meters: mp, metrics: metrics,
		prop:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		cfg: pipeline.Config{
			Kafka: kafkaclient.Config{Brokers: []string{addr}, ClientID: "test", Partitions: int32(partitions)},
			// The SDK's default sampler is parent-based.
			ParentBasedSampling: true,
		},
	}
	if err := h.pipeline().EnsureTopics(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h
}

// pipeline returns the pipeline of h.cfg with h's collaborators, as they
// are now.
func (h *harness) pipeline() *pipeline.Pipeline {
	h.t.Helper()
	p, err := pipeline.New(h.cfg, pipeline.WithTracerProvider(h.tracers), pipeline.WithMeterProvider(h.meters),
		pipeline.WithPropagator(h.prop), pipeline.WithLogger(h.logger), pipeline.WithMetrics(h.metrics))
	if err != nil {
		h.t.Fatal(err)
	}
	if h.clusterID != "" {
		p.SetKafkaClusterID(h.clusterID)
	}
	return p
}

// startWorkers starts one retrieval and one enrichment worker; the returned
// function stops them and waits until they have left their groups.
func (h *harness) startWorkers() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ws, err := h.pipeline().StartWorkers(ctx, h.idx, nil)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := ws.Wait(); err != nil {
			h.t.Errorf("workers: %v", err)
		}
	}
	h.t.Cleanup(stop)
	return stop
}

func (h *harness) client(collect bool) *producer.Client {
	c, err := h.pipeline().NewClient(h.t.Context(), collect)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// span is a finished span from either the in-memory recorder or the OTLP sink.
type span struct {
	TraceID, SpanID, ParentID string
	Name, Kind                string
	Attrs                     map[string]any
	Links                     []string // linked span ids
	Start, End                time.Time
	Service                   string
}

func (h *harness) recorded() []span {
	var out []span
	for _, s := range h.spans.Ended() {
		sp := span{
			TraceID: s.SpanContext().TraceID().String(),
			SpanID:  s.SpanContext().SpanID().String(),
			Name:    s.Name(),
			Kind:    s.SpanKind().String(),
			Attrs:   map[string]any{},
			Start:   s.StartTime(),
			End:     s.EndTime(),
		}
		if s.Parent().IsValid() {
			sp.ParentID = s.Parent().SpanID().String()
		}
		for _, kv := range s.Attributes() {
			sp.Attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		for _, l := range s.Links() {
			sp.Links = append(sp.Links, l.SpanContext.SpanID().String())
		}
		out = append(out, sp)
	}
	return out
}

func fromOTLP(in []otlptest.Span) []span {
	var out []span
	for _, s := range in {
		sp := span{
			TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentSpanID,
			Name: s.Name, Kind: kindName(s.Kind), Attrs: s.Attributes, Start: s.Start, End: s.End, Service: s.ServiceName,
		}
		for _, l := range s.Links {
			sp.Links = append(sp.Links, l.SpanID)
		}
		out = append(out, sp)
	}
	return out
}

// kindName maps OTLP kind names to the SDK's SpanKind.String() spelling.
func kindName(k string) string {
	switch k {
	case "INTERNAL":
		return "internal"
	case "SERVER":
		return "server"
	case "CLIENT":
		return "client"
	case "PRODUCER":
		return "producer"
	case "CONSUMER":
		return "consumer"
	}
	return k
}

func byTrace(spans []span) map[string][]span {
	m := make(map[string][]span)
	for _, s := range spans {
		m[s.TraceID] = append(m[s.TraceID], s)
	}
	return m
}

// stagesOf returns cfg's stage table: cfg.Stages or the default stages.
func stagesOf(cfg pipeline.Config) []pipeline.Stage {
	if cfg.Stages != nil {
		return cfg.Stages
	}
	return pipeline.DefaultStages(messages.DefaultTopics())
}

// checkTrace asserts the full structure of one request's trace, whose root
// span (no parent) is named root: the CLI's "request" span or the gateway's
// HTTP server span. It follows cfg's stage table: a send, wait and process
// span per stage input, each stage's work spans under its process span,
// and the hop of the results topic to the request client's collector.
func checkTrace(t *testing.T, spans []span, cfg pipeline.Config, root string) {
	t.Helper()
	byName := map[string][]span{}
	byID := map[string]span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanID] = s
	}
	one := func(name string) span {
		t.Helper()
		got := byName[name]
		if len(got) != 1 {
			names := make([]string, 0, len(spans))
			for _, s := range spans {
				names = append(names, s.Name)
			}
			sort.Strings(names)
			t.Fatalf("trace %s: %d spans named %q, want 1 (spans: %v)", spans[0].TraceID, len(got), name, names)
		}
		return got[0]
	}
	childOf := func(child, parent span) {
		t.Helper()
		if child.ParentID != parent.SpanID {
			t.Errorf("%s: parent is %q (%s), want %s", child.Name, child.ParentID, byID[child.ParentID].Name, parent.Name)
		}
	}
	attr := func(s span, key string, want any) {
		t.Helper()
		if got := s.Attrs[key]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s = %v, want %v", s.Name, key, got, want)
		}
	}
	has := func(s span, key string) {
		t.Helper()
		if _, ok := s.Attrs[key]; !ok {
			t.Errorf("%s: attribute %s missing", s.Name, key)
		}
	}

	rootSpan := one(root)
	if rootSpan.ParentID != "" {
		t.Errorf("root span has parent %s", rootSpan.ParentID)
	}
	parent := rootSpan
	type hop struct {
		topic, group string
		work         []string
	}
	var hops []hop
	workSpans := 0
	for _, st := range stagesOf(cfg) {
		hops = append(hops, hop{st.Input, st.Group, st.WorkSpans})
		workSpans += len(st.WorkSpans)
	}
	hops = append(hops, hop{cfg.Topology().Results(), "", nil})
	for _, hop := range hops {
		send := one("send " + hop.topic)
		wait := one("wait " + hop.topic)
		proc := one("process " + hop.topic)
		childOf(send, parent)
		childOf(wait, send)
		childOf(proc, send)
		if send.Kind != "producer" || proc.Kind != "consumer" || wait.Kind != "internal" {
			t.Errorf("%s kinds: send %s wait %s process %s", hop.topic, send.Kind, wait.Kind, proc.Kind)
		}
		if len(proc.Links) != 1 || proc.Links[0] != send.SpanID {
			t.Errorf("process %s links %v, want [%s]", hop.topic, proc.Links, send.SpanID)
		}
		for _, s := range []span{send, wait, proc} {
			attr(s, "messaging.system", "kafka")
			attr(s, "messaging.destination.name", hop.topic)
			has(s, "messaging.destination.partition.id")
			has(s, "messaging.kafka.offset")
			attr(s, "messaging.client.id", "test")
			has(s, "server.address")
			has(s, "server.port")
			has(s, "messaging.message.body.size")
			has(s, "kretrieve.message.key_hash")
			if _, raw := s.Attrs["messaging.kafka.message.key"]; raw {
				t.Errorf("%s: raw key recorded", s.Name)
			}
		}
		attr(send, "messaging.operation.type", "send")
		attr(send, "messaging.operation.name", "send")
		attr(proc, "messaging.operation.type", "process")
		attr(proc, "messaging.operation.name", "process")
		if hop.group != "" {
			attr(proc, "messaging.consumer.group.name", hop.group)
			attr(wait, "messaging.consumer.group.name", hop.group)
		} else if _, ok := proc.Attrs["messaging.consumer.group.name"]; ok {
			t.Errorf("process %s: group set for a direct consumer", hop.topic)
		}
		attr(send, "messaging.destination.partition.id", proc.Attrs["messaging.destination.partition.id"])
		attr(send, "messaging.kafka.offset", proc.Attrs["messaging.kafka.offset"])
		has(wait, "kretrieve.queue_wait.ms")
		has(wait, "kretrieve.queue_wait.offset_lag")
		attr(wait, "kretrieve.queue_wait.timestamp_type", "CreateTime")
		if wait.End.Before(wait.Start) {
			t.Errorf("wait %s negative: %v..%v", hop.topic, wait.Start, wait.End)
		}
		if wait.End.After(proc.Start) {
			t.Errorf("wait %s ends %v after process starts %v", hop.topic, wait.End, proc.Start)
		}
		for _, name := range hop.work {
			childOf(one(name), proc)
		}
		parent = proc
	}
	if want := 1 + 3*len(hops) + workSpans; len(spans) != want {
		t.Errorf("trace %s has %d spans, want %d", rootSpan.TraceID, len(spans), want)
	}
}

// mustNew is pipeline.New, failing t on an invalid configuration.
func mustNew(t testing.TB, cfg pipeline.Config, opts ...pipeline.Option) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
