// SPDX-License-Identifier: Apache-2.0

package dlq_test

import (
	"context"
	"errors"
	dltest "github.com/kretrieve/kretrieve/deadletters/deadletterstest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

func (e *env) replay(cfg dlq.ReplayConfig, extraOpts ...kgo.Opt) (dlq.ReplayResult, error) {
	e.t.Helper()
	if cfg.Topics == nil {
		cfg.Topics = []string{requestsDLQ}
	}
	return dlq.Replay(e.t.Context(), append(append([]kgo.Opt{}, e.opts...), extraOpts...), e.tracer(), cfg,
		dlq.WithTracerProvider(e.tp), dlq.WithLogger(e.logger))
}

// mustReplay replays and fails the test on error.
func (e *env) mustReplay(cfg dlq.ReplayConfig) dlq.ReplayResult {
	e.t.Helper()
	res, err := e.replay(cfg)
	if err != nil {
		e.t.Fatalf("replay: %v", err)
	}
	return res
}

// keys returns the keys of records, in order.
func keys(recs []*kgo.Record) string {
	var ks []string
	for _, r := range recs {
		ks = append(ks, string(r.Key))
	}
	return strings.Join(ks, ",")
}

func replayedKeys(res dlq.ReplayResult) string {
	var ks []string
	for _, l := range res.Letters {
		ks = append(ks, string(l.Key))
	}
	return strings.Join(ks, ",")
}

// spansNamed returns the ended spans with the given name, in end order.
func (e *env) spansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range e.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func TestReplayRepublishesInANewTrace(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(
		dltest.Letter{Key: "r1", Reason: "search: index closed", ErrorType: deadletters.ErrorTypeTransient,
			OrigTopic: requests, OrigOffset: 41, Attempts: 3, Traceparent: dltest.Traceparent(traceA, spanA),
			Extra: []kgo.RecordHeader{
				{Key: "content-type", Value: []byte("application/json")},
				{Key: "tracestate", Value: []byte("vendor=stale")},
				{Key: "baggage", Value: []byte("tenant=acme")},
				{Key: messages.HeaderDeadline, Value: []byte("1767225600000")},
			}}.Record(requestsDLQ),
		dltest.Letter{Key: "r2", Reason: "decode request: unexpected end of JSON input", ErrorType: deadletters.ErrorTypePermanent,
			OrigTopic: requests, OrigOffset: 42, Attempts: 1}.Record(requestsDLQ),
	)

	res := e.mustReplay(dlq.ReplayConfig{})
	if res.Replayed != 2 || res.Skipped != 0 || res.Failed != 0 || replayedKeys(res) != "r1,r2" {
		t.Fatalf("result %+v", res)
	}
	out := e.readAll(requests)
	if keys(out) != "r1,r2" {
		t.Fatalf("republished %q", keys(out))
	}
	for i, rec := range out {
		rl := res.Letters[i]
		if rl.Target != requests || rl.TargetPartition != rec.Partition || rl.TargetOffset != rec.Offset {
			t.Fatalf("letter %d: target %s/%d@%d, record at %d@%d", i, rl.Target, rl.TargetPartition, rl.TargetOffset, rec.Partition, rec.Offset)
		}
		if string(rec.Value) != string(rl.Value) {
			t.Fatalf("value %q, want %q", rec.Value, rl.Value)
		}
		for _, h := range rec.Headers {
			if strings.HasPrefix(h.Key, "kretrieve.dlq.") {
				t.Fatalf("record %d kept dead-letter header %s", i, h.Key)
			}
		}
		if tp := headerValues(rec, "traceparent"); len(tp) != 1 || !strings.HasPrefix(tp[0], "00-"+rl.ReplayTraceID+"-") {
			t.Fatalf("record %d traceparent %q, want one in the replay's trace %s", i, tp, rl.ReplayTraceID)
		}
		if ts := headerValues(rec, "tracestate"); len(ts) != 0 {
			t.Fatalf("record %d kept the old tracestate %q", i, ts)
		}
		if dl := headerValues(rec, messages.HeaderDeadline); len(dl) != 0 {
			t.Fatalf("record %d kept its gone caller's deadline %q", i, dl)
		}
	}
	if got := headerValues(out[0], "content-type"); len(got) != 1 || got[0] != "application/json" {
		t.Fatalf("application header lost: %v", out[0].Headers)
	}
	if got := headerValues(out[0], "baggage"); len(got) != 1 || got[0] != "tenant=acme" {
		t.Fatalf("baggage %q, want tenant=acme", got)
	}
	if res.Letters[0].TraceID != traceA || res.Letters[0].ReplayTraceID == traceA || res.Letters[0].ReplayTraceID == "" {
		t.Fatalf("trace ids: old %q new %q", res.Letters[0].TraceID, res.Letters[0].ReplayTraceID)
	}

	// Spans: each replay is a root linked to the old trace, with the send as
	// its child.
	replays := e.spansNamed("replay " + requestsDLQ)
	sends := e.spansNamed("send " + requests)
	if len(replays) != 2 || len(sends) != 2 {
		t.Fatalf("%d replay and %d send spans", len(replays), len(sends))
	}
	for i, rs := range replays {
		if rs.Parent().IsValid() || rs.SpanKind() != trace.SpanKindInternal {
			t.Fatalf("replay span %d: parent %v kind %v, want an INTERNAL root", i, rs.Parent(), rs.SpanKind())
		}
		if scope := rs.InstrumentationScope().Name; scope != "github.com/kretrieve/kretrieve/ops/dlq" {
			t.Fatalf("replay span %d scope %q, want the package path (dlq.ScopeName)", i, scope)
		}
		if rs.SpanContext().TraceID().String() != res.Letters[i].ReplayTraceID {
			t.Fatalf("replay span %d trace %s, result says %s", i, rs.SpanContext().TraceID(), res.Letters[i].ReplayTraceID)
		}
		var send sdktrace.ReadOnlySpan
		for _, s := range sends {
			if s.Parent().SpanID() == rs.SpanContext().SpanID() && s.SpanContext().TraceID() == rs.SpanContext().TraceID() {
				send = s
			}
		}
		if send == nil {
			t.Fatalf("no send span is the child of replay span %d", i)
		}
		if tp := headerValues(out[i], "traceparent")[0]; tp != dltest.Traceparent(send.SpanContext().TraceID().String(), send.SpanContext().SpanID().String()) {
			t.Fatalf("record %d traceparent %s is not its send span's", i, tp)
		}
	}
	r1 := replays[0]
	if links := r1.Links(); len(links) != 1 || links[0].SpanContext.TraceID().String() != traceA || links[0].SpanContext.SpanID().String() != spanA {
		t.Fatalf("replay span links %+v, want the dead letter's trace context", r1.Links())
	}
	if links := replays[1].Links(); len(links) != 0 {
		t.Fatalf("a letter without trace context got links %+v", links)
	}
	attrs := attrMap(r1.Attributes())
	for k, v := range map[string]any{
		"messaging.system":           "kafka",
		"messaging.destination.name": requests,
		"kretrieve.dlq.reason":       "search: index closed",
		"kretrieve.dlq.error_type":   "transient",
		"kretrieve.dlq.attempts":     int64(3),
		"kretrieve.dlq.topic":        requestsDLQ,
		"kretrieve.dlq.partition":    int64(0),
		"kretrieve.dlq.offset":       int64(0),
	} {
		if attrs[k] != v {
			t.Errorf("replay span attribute %s = %v (%T), want %v (%T)", k, attrs[k], attrs[k], v, v)
		}
	}

	// Progress: committed after the acknowledgements, so nothing is
	// replayed twice; a new dead letter is replayed alone.
	if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); c[0] != 2 {
		t.Fatalf("committed %v, want partition 0 at 2", c)
	}
	if res := e.mustReplay(dlq.ReplayConfig{}); res.Replayed != 0 || len(res.Letters) != 0 {
		t.Fatalf("second replay %+v", res)
	}
	e.produce(dltest.Letter{Key: "r3", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ))
	if res := e.mustReplay(dlq.ReplayConfig{}); res.Replayed != 1 || replayedKeys(res) != "r3" {
		t.Fatalf("third replay %+v", res)
	}
	if got := keys(e.readAll(requests)); got != "r1,r2,r3" {
		t.Fatalf("republished %q", got)
	}
}

func TestReplayFiltersDryRunAndLimit(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(
		dltest.Letter{Key: "a", Reason: "decode request: unexpected end of JSON input", ErrorType: deadletters.ErrorTypePermanent, OrigTopic: requests}.Record(requestsDLQ),
		dltest.Letter{Key: "b", Reason: "search: index closed", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
		dltest.Letter{Key: "c", Reason: "load documents: timeout", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
	)

	t.Run("dry run publishes and commits nothing", func(t *testing.T) {
		e := e.with(t)
		res := e.mustReplay(dlq.ReplayConfig{ErrorType: deadletters.ErrorTypeTransient, DryRun: true})
		if res.Replayed != 2 || res.Skipped != 1 || replayedKeys(res) != "b,c" {
			t.Fatalf("dry run %+v", res)
		}
		for _, l := range res.Letters {
			if l.Target != requests || l.TargetOffset != -1 || l.ReplayTraceID != "" {
				t.Fatalf("dry-run letter %+v", l)
			}
		}
		if out := e.readAll(requests); len(out) != 0 {
			t.Fatalf("dry run published %q", keys(out))
		}
		if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); len(c) != 0 {
			t.Fatalf("dry run committed %v", c)
		}
		if n := len(e.spans.Ended()); n != 0 {
			t.Fatalf("dry run recorded %d spans", n)
		}
	})

	t.Run("reason substring", func(t *testing.T) {
		e := e.with(t)
		res := e.mustReplay(dlq.ReplayConfig{Group: "g1", Reason: "timeout"})
		if res.Replayed != 1 || res.Skipped != 2 || replayedKeys(res) != "c" {
			t.Fatalf("reason filter %+v", res)
		}
		// Skipped letters are dealt with as far as g1 is concerned.
		if res := e.mustReplay(dlq.ReplayConfig{Group: "g1"}); res.Replayed != 0 || res.Skipped != 0 {
			t.Fatalf("g1 again %+v", res)
		}
	})

	t.Run("error type with a limit", func(t *testing.T) {
		e := e.with(t)
		res := e.mustReplay(dlq.ReplayConfig{Group: "g2", ErrorType: deadletters.ErrorTypeTransient, Limit: 1})
		if res.Replayed != 1 || res.Skipped != 1 || replayedKeys(res) != "b" {
			t.Fatalf("limit 1 %+v", res)
		}
		if c := e.committed("g2", requestsDLQ); c[0] != 2 {
			t.Fatalf("committed %v, want 2: c not reached yet", c)
		}
		res = e.mustReplay(dlq.ReplayConfig{Group: "g2", ErrorType: deadletters.ErrorTypeTransient})
		if res.Replayed != 1 || res.Skipped != 0 || replayedKeys(res) != "c" {
			t.Fatalf("g2 rest %+v", res)
		}
	})

	if got := keys(e.readAll(requests)); got != "c,b,c" {
		t.Fatalf("republished %q", got)
	}
}

// TestReplayUnacknowledgedStopsPartition: a record the client cannot
// publish is not committed, so the next replay starts with it.
func TestReplayUnacknowledgedStopsPartition(t *testing.T) {
	e := newEnv(t, 1)
	big := dltest.Letter{Key: "big", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ)
	big.Value = []byte(strings.Repeat("v", 4096))
	e.produce(
		dltest.Letter{Key: "a", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
		big,
		dltest.Letter{Key: "c", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
	)
	// A producer that refuses records over 2 KiB fails "big" at once.
	res, err := e.replay(dlq.ReplayConfig{}, kgo.MaxBufferedBytes(2048))
	if err == nil || !strings.Contains(err.Error(), "offset 1") || res.Failed != 1 {
		t.Fatalf("replay = %+v, %v; want big to fail", res, err)
	}
	if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); c[0] != 1 {
		t.Fatalf("committed %v, want partition 0 at 1 (before big)", c)
	}
	var failed int
	for _, s := range e.spansNamed("replay " + requestsDLQ) {
		if s.Status().Code == codes.Error {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d replay spans with an error, want 1", failed)
	}

	res = e.mustReplay(dlq.ReplayConfig{})
	if !strings.HasPrefix(replayedKeys(res), "big") {
		t.Fatalf("second replay %+v did not start with big", res)
	}
	counts := map[string]int{}
	for _, r := range e.readAll(requests) {
		counts[string(r.Key)]++
	}
	if counts["a"] != 1 || counts["big"] != 1 || counts["c"] < 1 {
		t.Fatalf("republished %v: a and big exactly once, c at least once", counts)
	}
}

// TestReplayBadTargetIsSkippedPast: a letter that names a dead-letter topic
// as its origin fails but does not block its partition.
func TestReplayBadTargetIsSkippedPast(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(
		dltest.Letter{Key: "loop", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: candidatesDLQ}.Record(requestsDLQ),
		dltest.Letter{Key: "ok", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
	)
	res, err := e.replay(dlq.ReplayConfig{})
	if err == nil || !strings.Contains(err.Error(), "dead-letter topic") || res.Failed != 1 || res.Replayed != 1 || replayedKeys(res) != "ok" {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); c[0] != 2 {
		t.Fatalf("committed %v, want 2", c)
	}
	if res, err := e.replay(dlq.ReplayConfig{}); err != nil || res.Replayed+res.Failed != 0 {
		t.Fatalf("second replay = %+v, %v", res, err)
	}
	if out := e.readAll(candidatesDLQ); len(out) != 0 {
		t.Fatalf("replayed into a dead-letter topic: %q", keys(out))
	}
}

func TestReplayRefusesTruncatedLetters(t *testing.T) {
	e := newEnv(t, 1)
	truncated := dltest.Letter{Key: "big", Reason: "record value: too large", ErrorType: deadletters.ErrorTypePermanent, OrigTopic: requests,
		Extra: []kgo.RecordHeader{{Key: deadletters.HeaderTruncated, Value: []byte("key=3/3 headers=1/1 value=4096/2097152")}}}
	e.produce(
		truncated.Record(requestsDLQ),
		dltest.Letter{Key: "ok", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
	)
	res, err := e.replay(dlq.ReplayConfig{})
	if err == nil || !strings.Contains(err.Error(), "truncated dead letter") || res.Failed != 1 || res.Replayed != 1 || replayedKeys(res) != "ok" {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	if out := e.readAll(requests); len(out) != 1 || string(out[0].Key) != "ok" {
		t.Fatalf("republished %q, want only ok", keys(out))
	}
	if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); c[0] != 2 {
		t.Fatalf("committed %v, want 2: a truncated letter is never offered again", c)
	}
}

func TestReplayConfigErrors(t *testing.T) {
	e := newEnv(t, 1)
	for name, cfg := range map[string]dlq.ReplayConfig{
		"no topics":      {Topics: []string{}},
		"blank topic":    {Topics: []string{" "}},
		"negative limit": {Topics: []string{requestsDLQ}, Limit: -1},
	} {
		if _, err := e.replay(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := e.replay(dlq.ReplayConfig{Topics: []string{"missing.dlq"}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing topic: %v", err)
	}
}

// TestReplayLettersOfTheWorker is the contract with the writer: a record
// dead-lettered by a consumers.Worker lists with every field and replays into
// a new trace linked to the failed request's trace.
func TestReplayLettersOfTheWorker(t *testing.T) {
	e := newEnv(t, 1)
	workerTracer := kafkatrace.New(kafkatrace.WithTracerProvider(e.tp), kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithConsumerGroup("retrieval"))
	w, err := consumers.New(consumers.Config{Group: "retrieval", Topic: requests, Attempts: 1}, workerTracer,
		func(context.Context, *consumers.Message) ([]*kgo.Record, error) {
			return nil, consumers.Permanent(errors.New("invalid request: query: required"))
		}, e.opts, consumers.WithLogger(e.logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			t.Error(err)
		}
	})
	stopWorker := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stopWorker)

	pub, err := kgo.NewClient(append(append([]kgo.Opt{}, e.opts...), kgo.WithHooks(e.tracer()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	rootCtx, root := e.tp.Tracer("test").Start(t.Context(), "request")
	sent := &kgo.Record{Topic: requests, Key: []byte("req-7"), Value: []byte(`{"query":""}`), Context: rootCtx}
	if err := pub.ProduceSync(t.Context(), sent).FirstErr(); err != nil {
		t.Fatal(err)
	}
	root.End()
	requestTrace := root.SpanContext().TraceID().String()

	var letters []deadletters.Letter
	poll.Until(t, 15*time.Second, func() bool {
		letters, err = dlq.List(t.Context(), e.opts, []string{requestsDLQ}, 0)
		return err != nil || len(letters) > 0
	}, "no dead letter written")
	if err != nil {
		t.Fatal(err)
	}
	stopWorker() // or it would dead-letter the replayed record again
	l := letters[0]
	if l.Reason != "invalid request: query: required" || l.ErrorType != deadletters.ErrorTypePermanent || l.OriginalTopic != requests ||
		l.OriginalPartition != sent.Partition || l.OriginalOffset != sent.Offset || !l.OriginalTimestamp.Equal(sent.Timestamp) ||
		l.Attempts != 1 || l.ConsumerGroup != "retrieval" || l.TraceID != requestTrace || string(l.Key) != "req-7" {
		t.Fatalf("letter %+v, sent %s/%d@%d at %v in trace %s", l, sent.Topic, sent.Partition, sent.Offset, sent.Timestamp, requestTrace)
	}

	res := e.mustReplay(dlq.ReplayConfig{})
	if res.Replayed != 1 || res.Letters[0].ReplayTraceID == requestTrace {
		t.Fatalf("replay %+v", res)
	}
	replays := e.spansNamed("replay " + requestsDLQ)
	if len(replays) != 1 || len(replays[0].Links()) != 1 || replays[0].Links()[0].SpanContext.TraceID().String() != requestTrace {
		t.Fatalf("replay spans %v: want one linked to the request's trace %s", replays, requestTrace)
	}
	// The link points at the dead letter's send span, in the request's trace.
	var dlqSend sdktrace.ReadOnlySpan
	for _, s := range e.spansNamed("send " + requestsDLQ) {
		dlqSend = s
	}
	if dlqSend == nil || replays[0].Links()[0].SpanContext.SpanID() != dlqSend.SpanContext().SpanID() {
		t.Fatalf("link %v, want the send %s span", replays[0].Links()[0].SpanContext, requestsDLQ)
	}
}
