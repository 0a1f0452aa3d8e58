// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/testutil/kafkapython"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pipeline"
)

// pythonStage is examples/python-stage/rescore.py, relative to this package.
const pythonStage = "../examples/python-stage/rescore.py"

// pythonService is the Python stage's service.name in the test.
const pythonService = "kretrieve-rescore-py"

// otlpJSONSink is an OTLP/HTTP endpoint that takes JSON trace exports
// (what the Python stage sends; otlptest takes protobuf only).
type otlpJSONSink struct {
	mu    sync.Mutex
	spans []span
}

func (s *otlpJSONSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON trace export on /v1/traces", http.StatusBadRequest)
		return
	}
	read, err := spans.ReadOTLPJSON(http.MaxBytesReader(w, r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range read {
		sp := span{TraceID: in.TraceID, SpanID: in.SpanID, ParentID: in.ParentSpanID, Name: in.Name, Kind: in.Kind,
			Attrs: map[string]any{}, Start: time.Unix(0, in.StartTimeUnixNano), End: time.Unix(0, in.EndTimeUnixNano), Service: in.Service}
		for _, a := range in.Attributes {
			sp.Attrs[a.Key] = a.Value
		}
		for _, l := range in.Links {
			sp.Links = append(sp.Links, l.SpanID)
		}
		s.spans = append(s.spans, sp)
	}
	w.WriteHeader(http.StatusOK)
}

func (s *otlpJSONSink) Spans() []span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spans)
}

// startPythonStage runs the Python stage against brokers, with env added
// to its environment, until stop or the end of the test (SIGTERM, then at
// most 10 s), exporting its spans to sink. stop waits until it exited.
func startPythonStage(t *testing.T, brokers, sinkURL string, env ...string) (out *syncbuf.Buffer, stop func()) {
	t.Helper()
	python := kafkapython.Python(t, "the Python stage test")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, python, pythonStage, "--brokers", brokers, "--client-id", "test",
		"--input", messages.DefaultCandidatesTopic, "--output", "retrieval.rescored", "--group", "rescore", "--stage", "rescore")
	cmd.Env = append(cmd.Environ(), "OTEL_SERVICE_NAME="+pythonService, "OTEL_EXPORTER_OTLP_ENDPOINT="+sinkURL)
	cmd.Env = append(cmd.Env, env...)
	out = &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = sync.OnceFunc(func() {
		cancel()
		// Wait returns ctx's error when the stage exits 0 on the SIGTERM
		// (its clean stop), an *exec.ExitError when it fails.
		if err := cmd.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("python stage: %v\n%s", err, out.String())
		}
	})
	t.Cleanup(stop)
	return out, stop
}

// TestAStageInPython: examples/python-stage/rescore.py (kafka-python),
// inserted into the stage table between retrieval and enrichment as an
// external stage, joins the pipeline: every result carries its timings
// entry; every request is one trace across Go and Python (the Python
// stage's wait, process, work and send spans, exported over OTLP/JSON, sit
// between retrieval's send and enrichment's process, which is the Python
// send span's child); and the pathway runs through it: the pathway hashes
// Go measures after the Python stage chain the Python stage's in and out
// checkpoints, and enrichment measures its edge from the Python stage's
// out checkpoint.
func TestAStageInPython(t *testing.T) {
	h := newHarness(t, 2)
	rescore := pipeline.ExternalStage("rescore", "retrieval.rescored")
	rescore.WorkSpans = []string{"rescore candidates"}
	stages, err := pipeline.InsertStage(pipeline.DefaultStages(messages.DefaultTopics()), messages.StageRetrieval, rescore)
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Stages = stages
	if err := h.pipeline().EnsureTopics(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pipeline().NewWorker("rescore", nil); err == nil {
		t.Fatal("NewWorker made a Go worker of an external stage")
	}
	sink := &otlpJSONSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	pyOut, _ := startPythonStage(t, h.cfg.Kafka.Brokers[0], srv.URL, "KRETRIEVE_PATHWAYS_INTERVAL=0")
	stop := h.startWorkers()
	c := h.client(true)

	queries := []string{"compress data with gzip", "parse a URL query string", "encode JSON", "sort a slice", "read a file"}
	outs := sendAndWait(t, c, queries)
	for _, out := range outs {
		if out.Failed {
			t.Fatalf("request %s: outcome %+v (python stage said:\n%s)", out.RequestID, out, pyOut.String())
		}
		var names []string
		for _, st := range out.Result.Timings.Stages {
			names = append(names, st.Stage)
		}
		if want := h.cfg.Topology().Names(); !slices.Equal(names, want) {
			t.Errorf("request %s: timings of stages %v, want %v", out.RequestID, names, want)
		}
	}
	// The stage exports a batch's spans once its outputs are written.
	const pySpansPerRequest = 4 // wait, process, rescore candidates, send
	if !poll.Wait(10*time.Second, func() bool { return len(sink.Spans()) >= pySpansPerRequest*len(queries) }) {
		t.Fatalf("the Python stage exported %d spans, want %d\n%s", len(sink.Spans()), pySpansPerRequest*len(queries), pyOut.String())
	}
	stop()
	_ = c.Close(context.Background())
	goTraces, pyTraces := byTrace(h.recorded()), byTrace(sink.Spans())
	for _, out := range outs {
		goSpans, pySpans := goTraces[out.TraceID], pyTraces[out.TraceID]
		if len(goSpans) == 0 || len(pySpans) != pySpansPerRequest {
			t.Fatalf("trace %s: %d Go spans, %d Python spans (want %d)", out.TraceID, len(goSpans), len(pySpans), pySpansPerRequest)
		}
		for _, s := range pySpans {
			if s.Service != pythonService {
				t.Errorf("trace %s: span %q of service %q, want %q", out.TraceID, s.Name, s.Service, pythonService)
			}
		}
		// One trace, hop by hop: the Python hop's spans have the shape and
		// attributes of the Go hops', and enrichment's spans are children
		// of the Python stage's send span.
		checkTrace(t, slices.Concat(goSpans, pySpans), h.cfg, "request")
	}

	// The pathway through the Python stage: Go's checkpoints after it
	// continue the hash its checkpoints chained, and each is measured once
	// per request, enrichment's edge from the Python stage's out.
	path := pythonStagePath()
	measuredByGo := slices.Concat(path[:3], path[5:])
	series := pathwaySeries(t, h.metrics)
	checkSeries(t, series, exactly(uint64(len(queries)), measuredByGo...))
	checkOriginCoversEdge(t, series)
	if enrichIn := series[path[5].key()]; enrichIn.Edge.Count != uint64(len(queries)) || enrichIn.Edge.Sum <= 0 {
		t.Errorf("enrichment's edge from the Python stage: %d measurements summing to %v", enrichIn.Edge.Count, enrichIn.Edge.Sum)
	}
	t.Logf("pathway through Python: %v", path)
}

// pythonStagePath is the request's pathway through the Python stage:
// retrieval's checkpoints, the Python stage's in and out, then enrichment
// reading its output, and the result.
func pythonStagePath() []hop {
	topics := messages.DefaultTopics()
	goCps := requestCheckpoints("kretrieve", topics)
	goCps[3].Topic = "retrieval.rescored"
	pyCps := []pathway.Checkpoint{
		{Service: pythonService, Group: "rescore", Topic: topics.Candidates, Direction: pathway.In},
		{Service: pythonService, Group: "rescore", Topic: "retrieval.rescored", Direction: pathway.Out},
	}
	return chain(0, slices.Concat(goCps[:3], pyCps, goCps[3:])...)
}
