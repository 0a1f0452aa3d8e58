// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

// TestNoUserDataInTelemetry plants canary strings in query texts, record
// keys and W3C baggage, sends them through the whole pipeline (completed
// requests, malformed and hostile records that are dead-lettered, a search
// backend that fails quoting the query, one that panics with it), exports
// spans and metrics over real OTLP/HTTP and logs at debug level as JSON,
// and asserts that no canary appears in the raw export request bodies or in
// the logs.
//
// The "record query text" run turns on the one debug opt-in
// (RecordQueryText, --record-query-text): the query canary must then show
// up in the exported spans, exactly as the search spans'
// kretrieve.query.text and nowhere else. That proves the raw-bytes check
// does see what the pipeline exports.
func TestNoUserDataInTelemetry(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		run := runCanaries(t, false)
		for _, c := range run.canaries.all() {
			run.assertAbsent(t, c)
		}
	})
	t.Run("record query text", func(t *testing.T) {
		run := runCanaries(t, true)
		run.assertAbsent(t, run.canaries.key)
		run.assertAbsent(t, run.canaries.baggage)
		if bytes.Contains(run.logs, []byte(run.canaries.query)) {
			t.Errorf("query canary in the logs with RecordQueryText:\n%s", linesWith(run.logs, run.canaries.query))
		}
		// Every occurrence in the export bodies is a search span's
		// kretrieve.query.text.
		inBodies := 0
		for _, b := range run.bodies {
			inBodies += bytes.Count(b, []byte(run.canaries.query))
		}
		asText := 0
		for _, s := range run.spans {
			for k, v := range s.Attributes {
				n := strings.Count(fmt.Sprint(v), run.canaries.query)
				if n > 0 && (s.Name != "search" || k != "kretrieve.query.text") {
					t.Errorf("span %s attribute %s = %v carries the query canary", s.Name, k, v)
				}
				asText += n
			}
		}
		if asText == 0 || inBodies != asText {
			t.Errorf("query canary in the export bodies %d times, as kretrieve.query.text of search spans %d times; want the same, not 0",
				inBodies, asText)
		}
	})
}

// canaries are unique strings planted in user data.
type canaries struct{ query, key, baggage string }

func newCanaries() canaries {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	// Lowercase letters and digits: analyzers and case folding keep them.
	return canaries{query: "qcanary" + h[:16], key: "kcanary" + h[16:32], baggage: "bcanary" + h[32:]}
}

func (c canaries) all() []string { return []string{c.query, c.key, c.baggage} }

// canaryRun is what one pipeline run exported and logged.
type canaryRun struct {
	canaries canaries
	bodies   [][]byte // raw OTLP trace and metric export request bodies
	spans    []otlptest.Span
	logs     []byte
}

func (r *canaryRun) assertAbsent(t *testing.T, canary string) {
	t.Helper()
	for i, b := range r.bodies {
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("canary %s in OTLP export request %d", canary, i)
		}
	}
	for _, s := range r.spans {
		for k, v := range s.Attributes {
			if strings.Contains(fmt.Sprint(v), canary) {
				t.Errorf("canary %s in span %s attribute %s = %v", canary, s.Name, k, v)
			}
		}
		if strings.Contains(s.StatusMessage, canary) {
			t.Errorf("canary %s in span %s status %q", canary, s.Name, s.StatusMessage)
		}
	}
	if bytes.Contains(r.logs, []byte(canary)) {
		t.Errorf("canary %s in the logs:\n%s", canary, linesWith(r.logs, canary))
	}
}

// canarySearcher searches the index, except that a query containing "fail"
// fails with an error quoting it (a leaky backend, a transient error) and
// one containing "explode" panics with it.
type canarySearcher struct{ *search.Index }

func (s canarySearcher) Search(ctx context.Context, q string, k int) ([]search.Hit, error) {
	switch {
	case strings.Contains(q, "fail"):
		return nil, fmt.Errorf("backend rejected query %q", q)
	case strings.Contains(q, "explode"):
		panic("cannot handle query " + q)
	}
	return s.Index.Search(ctx, q, k)
}

// runCanaries runs the pipeline over requests carrying fresh canaries and
// returns what was exported and logged.
func runCanaries(t *testing.T, recordQueryText bool) *canaryRun {
	cn := newCanaries()
	logs := &syncbuf.Buffer{}
	logger, err := tracing.NewLogger(logs, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	prev := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prev) })

	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_SERVICE_NAME", "kretrieve-canary-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	metrics := kafkatrace.NewMetrics()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(logger), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics)))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 2)
	h.tracers, h.meters, h.prop = p.TracerProvider, p.MeterProvider, p.Propagator
	h.metrics, h.cfg.ParentBasedSampling = metrics, p.ParentBasedSampling
	h.logger = logger
	h.cfg.RecordQueryText = recordQueryText
	h.cfg.Worker.RetryBackoff = time.Millisecond
	h.cfg.Worker.MaxRecordBytes = 8 << 10 // so that an oversized record fits the broker's default limit

	ctx, cancel := context.WithCancel(context.Background())
	retrievalW, err := h.pipeline().NewWorker(messages.StageRetrieval, canarySearcher{h.idx})
	if err != nil {
		t.Fatal(err)
	}
	enrichmentW, err := h.pipeline().NewWorker(messages.StageEnrichment, h.idx)
	if err != nil {
		t.Fatal(err)
	}
	var workers sync.WaitGroup
	for _, w := range []*consumers.Worker{retrievalW, enrichmentW} {
		workers.Go(func() {
			if err := w.Run(ctx); err != nil {
				t.Errorf("worker: %v", err)
			}
		})
	}
	stopWorkers := func() { cancel(); workers.Wait() }
	t.Cleanup(stopWorkers)
	c := h.client(true)

	// Through kretrieve's client, with the baggage canary in the context:
	// a completed request, one whose search fails (retried, then
	// dead-lettered) and one whose search panics.
	bctx := t.Context()
	member, err := baggage.NewMemberRaw("user.note", cn.baggage)
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(member)
	if err != nil {
		t.Fatal(err)
	}
	bctx = baggage.ContextWithBaggage(bctx, bag)
	type expect struct {
		name   string
		failed bool
		wait   func() (results.Outcome, error)
	}
	var expects []expect
	for _, tc := range []struct {
		query  string
		failed bool
	}{
		{"compress data with gzip " + cn.query, false},
		{"fail " + cn.query, true},
		{"explode " + cn.query, true},
	} {
		call, err := c.Start(bctx, messages.Request{Query: tc.query, TopK: 3}, true)
		if err != nil {
			t.Fatal(err)
		}
		expects = append(expects, expect{tc.query, tc.failed, func() (results.Outcome, error) { return call.Wait(t.Context(), resultTimeout) }})
	}

	// Raw records, as users' own producers write them: the key canary as
	// the key, the baggage canary in a baggage header.
	traceHeaders := func() []kgo.RecordHeader {
		return []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")},
			{Key: "baggage", Value: []byte("tenant=" + cn.baggage + ",session=" + cn.baggage)},
		}
	}
	manyHeaders := traceHeaders()
	for i := range 100 {
		manyHeaders = append(manyHeaders, kgo.RecordHeader{Key: fmt.Sprintf("x-%s-%d", cn.key, i), Value: []byte(cn.baggage)})
	}
	raw := rawProducer(t, h)
	for i, tc := range []struct {
		value   string
		headers []kgo.RecordHeader
		failed  bool
		keyID   bool // no request_id: the key becomes the request id
	}{
		{`{"request_id":"raw-ok","query":"parse a url ` + cn.query + `","top_k":2}`, traceHeaders(), false, false},
		{`{"query":"open a zip archive ` + cn.query + `","top_k":2}`, traceHeaders(), false, true},
		{`{"request_id":"raw-syntax","query":"` + cn.query + `","top_k":` + cn.query + `}`, traceHeaders(), true, false},
		{`{"request_id":"raw-topk","query":"` + cn.query + `","top_k":1000}`, traceHeaders(), true, false},
		{"{\"request_id\":\"raw-utf8\",\"query\":\"" + cn.query + "\xff\"}", traceHeaders(), true, false},
		{`{"request_id":"raw-big","query":"` + cn.query + strings.Repeat(" "+cn.query, 800) + `"}`, traceHeaders(), true, false},
		{`{"request_id":"raw-headers","query":"` + cn.query + `"}`, manyHeaders, true, false},
	} {
		key := fmt.Sprintf("%s-%d", cn.key, i)
		// A dead letter's outcome is found by the record's key, a result
		// by its request id.
		id := key
		if !tc.failed && !tc.keyID {
			id = "raw-ok"
		}
		done := c.Collector.Expect(id)
		rec := &kgo.Record{Topic: h.cfg.Topology().Requests(), Key: []byte(key), Value: []byte(tc.value), Headers: tc.headers}
		if err := raw.ProduceSync(t.Context(), rec).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", key, err)
		}
		expects = append(expects, expect{key, tc.failed, func() (results.Outcome, error) {
			select {
			case out := <-done:
				return out, nil
			case <-time.After(resultTimeout):
				return results.Outcome{}, fmt.Errorf("no outcome for %s", key)
			}
		}})
	}
	for _, e := range expects {
		out, err := e.wait()
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if out.Failed != e.failed {
			t.Fatalf("%s: outcome %+v, want failed=%v", e.name, out, e.failed)
		}
	}

	stopWorkers()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := &canaryRun{canaries: cn, bodies: srv.RawBodies(), spans: srv.Spans(), logs: logs.Bytes()}
	run.checkExercised(t, cn)
	return run
}

// checkExercised checks that the paths that could leak were taken: the
// canary query was searched, searches failed and were retried, records
// were dead-lettered for each reason, and all of it was exported and logged.
func (r *canaryRun) checkExercised(t *testing.T, cn canaries) {
	t.Helper()
	queryHash := redact.Query("compress data with gzip " + cn.query)[1].Value.AsString()
	var searched, retries, deadLetters int
	statuses := map[string]bool{}
	for _, s := range r.spans {
		if s.Name == "search" && s.Attributes["kretrieve.query.hash"] == queryHash {
			searched++
		}
		for _, ev := range s.Events {
			if ev == "retry" {
				retries++
			}
		}
		if s.Name == "send retrieval.requests.dlq" {
			deadLetters++
		}
		if s.Name == "process retrieval.requests" && s.StatusCode == "ERROR" {
			statuses[s.StatusMessage] = true
		}
	}
	if searched != 1 || retries != 2 || deadLetters != 7 {
		t.Errorf("exported: %d search spans of the canary query (want 1), %d retry events (want 2), %d dead-letter sends (want 7)",
			searched, retries, deadLetters)
	}
	for _, want := range []string{
		"search: error text withheld: it contains user data",
		"handler panic (string value)",
		"decode request: invalid json at byte ",
		"invalid request: top_k: must be between 1 and 100",
		"invalid request: query: must be valid utf-8",
		"record key and value: ",
		"record headers: 102 headers, over the limit of 64",
	} {
		found := false
		for st := range statuses {
			found = found || strings.HasPrefix(st, want)
		}
		if !found {
			t.Errorf("no process span with a status starting %q; statuses: %v", want, statuses)
		}
	}
	if n := bytes.Count(r.logs, []byte(`"msg":"dead-lettering record"`)); n != 7 {
		t.Errorf("%d dead-lettering log lines, want 7", n)
	}
	if !bytes.Contains(r.logs, []byte(`"level":"DEBUG"`)) {
		t.Error("no debug log line: the logs were not captured at debug level")
	}
}

// linesWith returns the lines of logs that contain s.
func linesWith(logs []byte, s string) string {
	var out []string
	for line := range strings.Lines(string(logs)) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
