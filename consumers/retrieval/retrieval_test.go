// SPDX-License-Identifier: Apache-2.0

package retrieval_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/codes"
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
	return handleWith(t.Context(), s, retrieval.Config{RecordQueryText: recordText}, value)
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

// stuckSearcher never answers: its searches end only with their context.
// It counts them.
type stuckSearcher struct {
	fakeSearcher
	calls *atomic.Int32
}

func (s stuckSearcher) Search(ctx context.Context, _ string, _ int) ([]search.Hit, error) {
	if s.calls != nil {
		s.calls.Add(1)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// frozenOnceSearcher's first search outlives its deadline, as a search does
// when its process is frozen (SIGSTOP, docker pause, a VM's steal) or
// starved of CPU while it runs; the searches after it answer at once.
type frozenOnceSearcher struct {
	fakeSearcher
	calls *atomic.Int32
}

func (s frozenOnceSearcher) Search(ctx context.Context, q string, k int) ([]search.Hit, error) {
	if s.calls.Add(1) == 1 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.fakeSearcher.Search(ctx, q, k)
}

// handleWith runs one record through a handler of s configured by cfg, in ctx.
func handleWith(ctx context.Context, s retrieval.Searcher, cfg retrieval.Config, value string) ([]*kgo.Record, *tracetest.SpanRecorder, error) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h := retrieval.Handler(s, cfg, consumers.WithTracerProvider(tp))
	outs, err := h(ctx, &consumers.Message{Record: &kgo.Record{Key: []byte("key-1"), Value: []byte(value)}, Attempt: 1})
	return outs, rec, err
}

// smallIndex is an in-memory index of a few documents.
func smallIndex(t *testing.T) *search.Index {
	t.Helper()
	ix, err := search.NewMemory(t.Context(), "small", []search.Document{
		{ID: "net/url.ParseQuery", Title: "ParseQuery", Body: "ParseQuery parses the URL-encoded query string."},
		{ID: "compress/gzip", Title: "gzip", Body: "Package gzip reads and writes gzip compressed files."},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// TestSearchTimeoutDeadLetters: a search that overruns Config.SearchTimeout
// (twice: TestSearchTimeoutIsTriedTwice) is cancelled and its request fails
// with a permanent ErrSearchTimeout (so it is dead-lettered, not retried by
// the worker), on the search span too (security finding 6 of issue 16). Both a searcher that waits for its context and
// the index itself, past its deadline before it starts.
func TestSearchTimeoutDeadLetters(t *testing.T) {
	query := strings.Repeat("go ", 1365)
	for name, tc := range map[string]struct {
		s       retrieval.Searcher
		timeout time.Duration
	}{
		"stuck searcher": {stuckSearcher{}, time.Millisecond},
		"index":          {smallIndex(t), time.Nanosecond},
	} {
		t.Run(name, func(t *testing.T) {
			outs, rec, err := handleWith(t.Context(), tc.s, retrieval.Config{SearchTimeout: tc.timeout},
				`{"query":"`+query+`","top_k":100}`)
			if outs != nil || !errors.Is(err, retrieval.ErrSearchTimeout) || !consumers.IsPermanent(err) {
				t.Fatalf("outs %v, err %v: want a permanent ErrSearchTimeout", outs, err)
			}
			want := fmt.Sprintf("search: search timeout: no answer within %s", tc.timeout)
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			span := rec.Ended()[0]
			if span.Status().Code != codes.Error || !strings.Contains(span.Status().Description, "search timeout") {
				t.Errorf("search span status %+v", span.Status())
			}
		})
	}
}

// TestSearchTimeoutIsTriedTwice: one overrun is not enough to dead-letter a
// request. A search that overruns its deadline once is run again at once
// with a fresh deadline, since a worker that was frozen or starved while
// the search ran (not the query) may have made it late; the search span
// records the retry. Only a second overrun dead-letters the request, so a
// query that is slow by itself costs at most twice the deadline.
func TestSearchTimeoutIsTriedTwice(t *testing.T) {
	t.Run("late once", func(t *testing.T) {
		var calls atomic.Int32
		s := frozenOnceSearcher{fakeSearcher{hits: []search.Hit{{ID: "a", Score: 1}}}, &calls}
		outs, rec, err := handleWith(t.Context(), s, retrieval.Config{SearchTimeout: time.Millisecond}, `{"query":"gzip"}`)
		if err != nil || len(outs) != 1 {
			t.Fatalf("outs %v, err %v: want the candidates of the second search", outs, err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("%d searches, want 2", n)
		}
		span := rec.Ended()[0]
		if span.Status().Code == codes.Error {
			t.Errorf("search span status %+v: the retried search answered", span.Status())
		}
		var retries []string
		for _, ev := range span.Events() {
			if ev.Name != "retry" {
				continue
			}
			for _, kv := range ev.Attributes {
				if kv.Key == "kretrieve.retry.error" {
					retries = append(retries, kv.Value.AsString())
				}
			}
		}
		if want := []string{"search timeout: no answer within 1ms"}; !slices.Equal(retries, want) {
			t.Errorf("search span retry events %q, want %q", retries, want)
		}
	})
	t.Run("late twice", func(t *testing.T) {
		var calls atomic.Int32
		outs, _, err := handleWith(t.Context(), stuckSearcher{calls: &calls}, retrieval.Config{SearchTimeout: time.Millisecond}, `{"query":"gzip"}`)
		if outs != nil || !errors.Is(err, retrieval.ErrSearchTimeout) || !consumers.IsPermanent(err) {
			t.Fatalf("outs %v, err %v: want a permanent ErrSearchTimeout", outs, err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("%d searches, want 2", n)
		}
	})
}

// TestSearchCancelledByWorkerIsTransient: the worker's own context ending
// (shutdown) is not a search timeout: the record is left to be retried.
func TestSearchCancelledByWorkerIsTransient(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := handleWith(ctx, stuckSearcher{}, retrieval.Config{SearchTimeout: time.Hour}, `{"query":"q"}`)
	if err == nil || errors.Is(err, retrieval.ErrSearchTimeout) || consumers.IsPermanent(err) {
		t.Fatalf("err %v: want a transient cancellation", err)
	}
}

// TestSearchSpanRecordsClausesAndDroppedTerms: the search span says how many
// term clauses ran and, over search.MaxQueryTerms, how many terms were left
// out.
func TestSearchSpanRecordsClausesAndDroppedTerms(t *testing.T) {
	var words []string
	for i := range search.MaxQueryTerms + 8 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	for _, tc := range []struct {
		query   string
		clauses int64
		dropped any
	}{
		{strings.Repeat("gzip ", 800), 4, nil},
		{strings.Join(words, " "), 4 * search.MaxQueryTerms, int64(8)},
	} {
		_, rec, err := handleWith(t.Context(), smallIndex(t), retrieval.Config{}, `{"query":"`+tc.query+`","top_k":100}`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]any{}
		for _, kv := range rec.Ended()[0].Attributes() {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		if got["kretrieve.search.clauses"] != tc.clauses || got["kretrieve.search.terms_dropped"] != tc.dropped {
			t.Errorf("%.20q: clauses %v, terms dropped %v; want %v, %v", tc.query,
				got["kretrieve.search.clauses"], got["kretrieve.search.terms_dropped"], tc.clauses, tc.dropped)
		}
	}
}
