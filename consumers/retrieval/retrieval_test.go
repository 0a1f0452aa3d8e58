package retrieval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

type fakeSearcher struct {
	hits []search.Hit
	err  error
}

func (f fakeSearcher) Search(context.Context, string, int) ([]search.Hit, error) {
	return f.hits, f.err
}
func (fakeSearcher) Name() string { return "fake" }
func (fakeSearcher) Len() int     { return 42 }

func handle(t *testing.T, s retrieval.Searcher, recordText bool, value string) ([]*kgo.Record, *tracetest.SpanRecorder, error) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h := retrieval.Handler(s, retrieval.Config{RecordQueryText: recordText}, consumers.WithTracerProvider(tp))
	outs, err := h(t.Context(), &consumers.Message{Record: &kgo.Record{Key: []byte("key-1"), Value: []byte(value)}, Attempt: 1})
	return outs, rec, err
}

func TestSearchSpanAndCandidates(t *testing.T) {
	s := fakeSearcher{hits: []search.Hit{{ID: "a", Score: 2}, {ID: "b", Score: 1}}}
	for _, recordText := range []bool{false, true} {
		outs, rec, err := handle(t, s, recordText, `{"query":"secret query","top_k":5}`)
		if err != nil || len(outs) != 1 {
			t.Fatalf("outs %v err %v", outs, err)
		}
		c, err := messages.DecodeCandidates(outs[0].Value)
		if err != nil || c.RequestID != "key-1" || string(outs[0].Key) != "key-1" || len(c.Candidates) != 2 || c.Query != "secret query" {
			t.Fatalf("candidates %+v err %v", c, err)
		}
		if st := c.Timings.Stages; len(st) != 1 || st[0].Stage != messages.StageRetrieval || st[0].WorkMS < 0 {
			t.Fatalf("timings %+v, want one retrieval entry", st)
		}
		span := rec.Ended()[0]
		got := map[string]any{}
		for _, kv := range span.Attributes() {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		if span.Name() != "search" || got["kretrieve.index.name"] != "fake" || got["kretrieve.index.documents"] != int64(42) ||
			got["kretrieve.search.top_k"] != int64(5) || got["kretrieve.search.hits"] != int64(2) || got["kretrieve.query.length"] != int64(12) {
			t.Fatalf("span %s attributes %v", span.Name(), got)
		}
		if _, has := got["kretrieve.query.text"]; has != recordText {
			t.Fatalf("record text %v: attributes %v", recordText, got)
		}
	}
}

func TestErrors(t *testing.T) {
	_, _, err := handle(t, fakeSearcher{}, false, `{"query":""}`)
	if !consumers.IsPermanent(err) {
		t.Fatalf("invalid request: %v", err)
	}
	_, _, err = handle(t, fakeSearcher{err: errors.New("index busy")}, false, `{"query":"q"}`)
	if err == nil || consumers.IsPermanent(err) {
		t.Fatalf("search failure should be transient: %v", err)
	}
	_, _, err = handle(t, fakeSearcher{err: search.ErrInvalidQuery}, false, `{"query":"q"}`)
	if !consumers.IsPermanent(err) {
		t.Fatalf("invalid query should be permanent: %v", err)
	}
}

// TestSearchErrorQuotingTheQueryIsWithheld: a searcher whose error quotes the
// query must not carry it into the search span or the returned error (which
// goes to the process span, the log and the dead-letter reason).
func TestSearchErrorQuotingTheQueryIsWithheld(t *testing.T) {
	const query = "my secret canary query"
	for _, base := range []error{errors.New("index busy"), search.ErrInvalidQuery} {
		leaky := fmt.Errorf("cannot run %q: %w", query, base)
		_, rec, err := handle(t, fakeSearcher{err: leaky}, true, `{"query":"`+query+`"}`)
		if err == nil || strings.Contains(err.Error(), "canary") || !errors.Is(err, base) {
			t.Fatalf("error %v: quotes the query or lost %v", err, base)
		}
		if consumers.IsPermanent(err) != errors.Is(base, search.ErrInvalidQuery) {
			t.Errorf("%v: permanent %v", err, consumers.IsPermanent(err))
		}
		span := rec.Ended()[0]
		if strings.Contains(span.Status().Description, "canary") {
			t.Errorf("search span status %q quotes the query", span.Status().Description)
		}
		for _, ev := range span.Events() {
			for _, kv := range ev.Attributes {
				if kv.Key != "kretrieve.query.text" && strings.Contains(kv.Value.String(), "canary") {
					t.Errorf("search span event %s: %s = %q", ev.Name, kv.Key, kv.Value.String())
				}
			}
		}
	}
}
