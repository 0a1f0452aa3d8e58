// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/topology"
)

// filterStage is a stage as a user would write one: between retrieval and
// enrichment it drops the candidates whose documents are blocked. A
// request whose query is "poison" gets an undecodable output, which the
// next stage must dead-letter.
func filterStage(blocked ...string) pipeline.Stage {
	return pipeline.Stage{
		Stage:     topology.Stage{Name: "filter", Output: "retrieval.filtered"},
		WorkSpans: []string{"filter candidates"},
		NewHandler: func(env pipeline.StageEnv) (consumers.Handler, error) {
			tracer := env.TracerProvider.Tracer("example.com/filter")
			return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
				c, err := messages.DecodeCandidates(msg.Record.Value)
				if err != nil {
					return nil, consumers.Permanent(err)
				}
				start := time.Now()
				_, span := tracer.Start(ctx, "filter candidates")
				c.Candidates = slices.DeleteFunc(c.Candidates, func(x messages.Candidate) bool { return slices.Contains(blocked, x.DocID) })
				span.End()
				c.Timings = c.Timings.With(messages.StageTiming{Stage: env.Stage.Name,
					QueueMS: ms(msg.QueueWait.Wait), WorkMS: ms(time.Since(start))})
				value, err := messages.EncodeCandidates(c)
				if err != nil {
					return nil, consumers.Permanent(err)
				}
				if c.Query == "poison" {
					value = []byte("not candidates")
				}
				return []*kgo.Record{{Topic: env.Stage.Output, Key: msg.Record.Key, Value: value}}, nil
			}, nil
		},
	}
}

// TestAnExtraStageIsOneDeclaration: a third stage, declared once and
// inserted into the table, runs between retrieval and enrichment; every
// request is one connected trace across its four hops, the stage's work is
// in it, and the result collector watches the new stage's dead letters.
func TestAnExtraStageIsOneDeclaration(t *testing.T) {
	h := newHarness(t, 3)
	stages, err := pipeline.InsertStage(pipeline.DefaultStages(messages.DefaultTopics()), messages.StageRetrieval, filterStage("net/url"))
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Stages = stages
	if err := h.pipeline().EnsureTopics(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := h.cfg.Topology().Topics(), []string{"retrieval.requests", "retrieval.candidates", "retrieval.filtered", "retrieval.results"}; !slices.Equal(got, want) {
		t.Fatalf("topics %v, want %v", got, want)
	}
	stop := h.startWorkers()
	c := h.client(true)

	queries := []string{"parse a URL query string", "compress data with gzip", "encode JSON", "sort a slice"}
	outs := sendAndWait(t, c, queries)
	for _, out := range outs {
		for _, d := range out.Result.Documents {
			if d.ID == "net/url" {
				t.Errorf("request %s: the filter stage's blocked document net/url reached the result", out.RequestID)
			}
		}
		if len(out.Result.Documents) == 0 {
			t.Errorf("request %s: no documents", out.RequestID)
		}
		var names []string
		for _, st := range out.Result.Timings.Stages {
			names = append(names, st.Stage)
		}
		if want := h.cfg.Topology().Names(); !slices.Equal(names, want) {
			t.Errorf("request %s: timings of stages %v, want %v", out.RequestID, names, want)
		}
	}

	// The enrichment stage now reads the filter's output: its dead letters
	// land on retrieval.filtered.dlq, and the collector reports them.
	call, err := c.Start(t.Context(), messages.Request{Query: "poison", TopK: 3}, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := call.Wait(t.Context(), resultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || out.Topic != "retrieval.filtered.dlq" {
		t.Errorf("poisoned request: outcome %+v, want a failure on retrieval.filtered.dlq", out)
	}

	stop()
	_ = c.Close(context.Background())
	traces := byTrace(h.recorded())
	sdkSpans := map[string][]spans.Span{}
	for _, s := range h.spans.Ended() {
		id := s.SpanContext().TraceID().String()
		sdkSpans[id] = append(sdkSpans[id], spans.FromReadOnly(s))
	}
	shape := conformance.Shape{Root: "request", Hops: conformance.Hops(h.cfg.Topology(), nil, ""),
		Spans: 1 + 3*4 + 1 + 1 + 3} // root; send, wait, process per hop; search; filter; load, dedupe, rerank
	for _, out := range outs {
		spans, ok := traces[out.TraceID]
		if !ok {
			t.Fatalf("no trace %s for request %s", out.TraceID, out.RequestID)
		}
		checkTrace(t, spans, h.cfg, "request")
		for _, v := range conformance.CheckRequest(sdkSpans[out.TraceID], shape, conformance.Default()) {
			t.Errorf("trace %s: %v", out.TraceID, v)
		}
	}
}

// TestStageTableValidation: a stage without a handler, or a table that is
// not a chain, is refused before any worker starts.
func TestStageTableValidation(t *testing.T) {
	cfg := pipeline.Config{Kafka: kafkaclient.Config{Brokers: []string{"127.0.0.1:1"}}}
	noHandler := filterStage()
	noHandler.NewHandler = nil
	stages, err := pipeline.InsertStage(pipeline.DefaultStages(messages.DefaultTopics()), messages.StageRetrieval, noHandler)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Stages = stages
	if _, err := pipeline.New(cfg); err == nil {
		t.Error("New accepted a table with a stage without a handler")
	}
	broken := pipeline.DefaultStages(messages.DefaultTopics())
	broken[1].Input = "elsewhere"
	cfg.Stages = broken
	if err := cfg.Validate(); err == nil {
		t.Error("Validate accepted a table that is not a chain")
	}
	if _, err := mustNew(t, pipeline.Config{Kafka: kafkaclient.Config{Brokers: []string{"127.0.0.1:1"}}}).NewWorker("nope", nil); err == nil {
		t.Error("NewWorker accepted an unknown stage")
	}
	if _, err := pipeline.InsertStage(pipeline.DefaultStages(messages.DefaultTopics()), "nope", filterStage()); err == nil {
		t.Error("InsertStage accepted an unknown stage to insert after")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
