// SPDX-License-Identifier: Apache-2.0

package enrichment_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

type leakyStore struct{ err error }

func (s leakyStore) Highlight(_ context.Context, query string, _ []string, _ int) (map[string]search.Highlighted, error) {
	return nil, fmt.Errorf("highlight %q: %w", query, s.err)
}

// TestStoreErrorQuotingTheQueryIsWithheld: a store whose error quotes the
// query must not carry it into the load span or the returned error.
func TestStoreErrorQuotingTheQueryIsWithheld(t *testing.T) {
	const query = "my secret canary query"
	value, err := messages.EncodeCandidates(messages.Candidates{RequestID: "r1", Query: query, TopK: 1, Candidates: []messages.Candidate{{DocID: "a", Score: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	busy := errors.New("store busy")
	h := enrichment.Handler(leakyStore{err: busy}, enrichment.Config{}, consumers.WithTracerProvider(tp))
	_, err = h(t.Context(), &consumers.Message{Record: &kgo.Record{Key: []byte("r1"), Value: value}, Attempt: 1})
	if err == nil || strings.Contains(err.Error(), "canary") || !errors.Is(err, busy) || consumers.IsPermanent(err) {
		t.Fatalf("error %v: quotes the query, lost the cause or became permanent", err)
	}
	span := rec.Ended()[0]
	if span.Name() != "load documents" || strings.Contains(span.Status().Description, "canary") {
		t.Errorf("span %s status %q", span.Name(), span.Status().Description)
	}
	for _, ev := range span.Events() {
		for _, kv := range ev.Attributes {
			if strings.Contains(kv.Value.String(), "canary") {
				t.Errorf("span event %s: %s = %q", ev.Name, kv.Key, kv.Value.String())
			}
		}
	}
}

type fakeStore struct{}

func (fakeStore) Highlight(_ context.Context, _ string, ids []string, _ int) (map[string]search.Highlighted, error) {
	out := map[string]search.Highlighted{}
	for _, id := range ids {
		out[id] = search.Highlighted{Document: search.Document{ID: id, Title: id}, Snippet: "s"}
	}
	return out, nil
}

// TestTimingsKeepWhatWasReceived: the result's timings are the candidates'
// entries, unchanged and in order, followed by the enrichment entry.
func TestTimingsKeepWhatWasReceived(t *testing.T) {
	received := messages.Timings{Stages: []messages.StageTiming{
		{Stage: messages.StageRetrieval, QueueMS: 1, WorkMS: 2},
		{Stage: "rerank", QueueMS: 3, WorkMS: 4},
	}}
	value, err := messages.EncodeCandidates(messages.Candidates{RequestID: "r1", Query: "q", TopK: 1, Candidates: []messages.Candidate{{DocID: "a", Score: 1}}, Timings: received})
	if err != nil {
		t.Fatal(err)
	}
	h := enrichment.Handler(fakeStore{}, enrichment.Config{})
	msg := &consumers.Message{Record: &kgo.Record{Key: []byte("r1"), Value: value}, Attempt: 1}
	msg.QueueWait.Wait = 5 * time.Millisecond
	outs, err := h(t.Context(), msg)
	if err != nil || len(outs) != 1 {
		t.Fatalf("outs %v err %v", outs, err)
	}
	r, err := messages.DecodeResult(outs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	st := r.Timings.Stages
	if len(st) != 3 || st[0] != received.Stages[0] || st[1] != received.Stages[1] ||
		st[2].Stage != messages.StageEnrichment || st[2].QueueMS != 5 || st[2].WorkMS < 0 {
		t.Fatalf("timings %+v", st)
	}
}
