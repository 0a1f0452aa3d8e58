// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/results"
)

// TestRetrievalTrustBoundary: with RetrievalTrustBoundary, a request from an
// outside producer starts our own trace at the retrieval worker, linked to
// the producer's context; the internal hops after it stay parented; only
// trusted baggage crosses, and only allow-listed baggage becomes attributes.
func TestRetrievalTrustBoundary(t *testing.T) {
	h := newHarness(t, 1)
	h.cfg.RetrievalTrustBoundary = true
	h.cfg.TrustedBaggage = []string{"tenant"}
	h.cfg.BaggageAttributes = []string{"tenant", "secret"}
	h.startWorkers()
	c := h.client(true)
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	done := c.Collector.Expect("outside-1")
	rec := &kgo.Record{
		Topic: h.cfg.Topology().Requests(),
		Key:   []byte("outside-1"),
		Value: []byte(`{"request_id":"outside-1","query":"read a zip archive","top_k":3}`),
		Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-" + traceID + "-" + spanID + "-01")},
			{Key: "tracestate", Value: []byte("outside=1")},
			{Key: "baggage", Value: []byte("tenant=acme,secret=hunter2")},
		},
	}
	if err := rawProducer(t, h).ProduceSync(t.Context(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var out results.Outcome
	select {
	case out = <-done:
	case <-time.After(resultTimeout):
		t.Fatal("no result")
	}
	if out.Failed || out.TraceID == "" || out.TraceID == traceID {
		t.Fatalf("outcome %+v: want a trace of our own", out)
	}
	// wait+process+search, send/wait/process+3 enrichment steps,
	// send/wait/process, all in our trace.
	eventually(t, func() bool { return len(byTrace(h.recorded())[out.TraceID]) == 12 }, "12 spans in trace %s", out.TraceID)
	if n := len(byTrace(h.recorded())[traceID]); n != 0 {
		t.Fatalf("%d spans in the outside trace", n)
	}
	spans := byTrace(h.recorded())[out.TraceID]
	byName := map[string]span{}
	for _, s := range spans {
		byName[s.Name] = s
		for k, v := range s.Attrs {
			if s, _ := v.(string); strings.Contains(k, "secret") || strings.Contains(s, "hunter2") {
				t.Errorf("untrusted baggage in attribute %s=%v", k, v)
			}
		}
	}
	proc := byName["process retrieval.requests"]
	if proc.ParentID != "" || len(proc.Links) != 1 || proc.Links[0] != spanID {
		t.Fatalf("process span parent %q links %v: want a root linked to %s", proc.ParentID, proc.Links, spanID)
	}
	if byName["wait retrieval.requests"].ParentID != proc.SpanID {
		t.Fatal("wait span is not the process span's child")
	}
	next := byName["process retrieval.candidates"]
	if next.ParentID == "" || next.ParentID != byName["send retrieval.candidates"].SpanID {
		t.Fatalf("internal hop: process retrieval.candidates parent %q, want the send span", next.ParentID)
	}
	for _, name := range []string{"process retrieval.requests", "process retrieval.candidates"} {
		if got := byName[name].Attrs["kretrieve.baggage.tenant"]; got != "acme" {
			t.Errorf("%s: kretrieve.baggage.tenant = %v, want acme", name, got)
		}
	}
}
