// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
)

// TestExpiredRecordsSkipTheHandler sends records through a real broker:
// ones taken past their deadline, ones within it, and ones whose deadline
// header is hostile (and so ignored). The expired ones never reach the
// handler, produce nothing, are committed, counted in
// kretrieve.requests.expired, marked on their process span and end their
// pathway at an expired checkpoint; the others are handled and their
// outputs carry the input's deadline on.
func TestExpiredRecordsSkipTheHandler(t *testing.T) {
	const in, out = "dl.in", "dl.out"
	addr := brokertest.NewBroker(t, 1).Addr()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := kadm.NewClient(cl).CreateTopics(t.Context(), 1, -1, nil, in, out, messages.DLQTopic(in)); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	past := messages.FormatDeadline(now.Add(-time.Second))
	future := messages.FormatDeadline(now.Add(time.Minute))
	dl := func(vals ...string) []kgo.RecordHeader {
		var hs []kgo.RecordHeader
		for _, v := range vals {
			hs = append(hs, kgo.RecordHeader{Key: messages.HeaderDeadline, Value: []byte(v)})
		}
		return hs
	}
	type rec struct {
		key     string
		headers []kgo.RecordHeader
		expired bool
		carried string // the deadline its output carries, "" none
	}
	recs := []rec{
		{"expired-1", dl(past), true, ""},
		{"live-1", dl(future), false, future},
		{"expired-2", dl(past), true, ""},
		{"none", nil, false, ""},
		{"not-a-number", dl("soon"), false, ""},
		{"repeated", dl(past, past), false, ""},
		{"seconds-not-ms", dl(strconv.FormatInt(now.Add(-time.Second).Unix(), 10)), false, ""},
		{"far-future", dl(strconv.FormatInt(now.Add(48*time.Hour).UnixMilli(), 10)), false, "clamped"},
		{"expired-3", dl(past), true, ""},
	}

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	metrics := kafkatrace.NewMetrics()
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithConsumerGroup("dl"),
		kafkatrace.WithMetrics(metrics), kafkatrace.WithPathways("dl-test"))
	var handled atomic.Int64
	var seen atomic.Int64 // the Message.Deadline live-1's handler saw, Unix ms
	h := func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		handled.Add(1)
		if string(msg.Record.Key) == "live-1" {
			seen.Store(msg.Deadline.UnixMilli())
		}
		return []*kgo.Record{{Topic: out, Key: msg.Record.Key, Value: []byte("ok")}}, nil
	}
	w, err := consumers.New(consumers.Config{Group: "dl", Topic: in}, tracer, h, []kgo.Opt{kgo.SeedBrokers(addr)},
		consumers.WithMeterProvider(mp), consumers.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})

	for _, r := range recs {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: in, Key: []byte(r.key), Value: []byte("{}"), Headers: r.headers}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	const wantExpired, wantHandled = 3, 6
	adm := kadm.NewClient(cl)
	poll.Until(t, 20*time.Second, func() bool {
		resp, err := adm.FetchOffsets(t.Context(), "dl")
		if err != nil {
			return false
		}
		o, ok := resp.Lookup(in, 0)
		return ok && o.At == int64(len(recs))
	}, "the group did not commit all %d records", len(recs))

	if got := handled.Load(); got != wantHandled {
		t.Errorf("handler ran %d times, want %d (the expired records must skip it)", got, wantHandled)
	}
	if want, _, _ := messages.ParseDeadline([]byte(future), time.Now()); seen.Load() != want.UnixMilli() {
		t.Errorf("the handler saw Message.Deadline %d, want %d", seen.Load(), want.UnixMilli())
	}
	if w.Expired() != wantExpired || w.Processed() != int64(len(recs)) {
		t.Errorf("Expired() = %d, Processed() = %d; want %d, %d", w.Expired(), w.Processed(), wantExpired, len(recs))
	}

	// Nothing was produced for the expired records; the others' outputs
	// carry their input's deadline.
	outs := readAll(t, addr, out, wantHandled)
	ends, err := adm.ListEndOffsets(t.Context(), out, messages.DLQTopic(in))
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(out, 0); o.Offset != wantHandled {
		t.Errorf("%s holds %d records, want %d: nothing for the expired ones", out, o.Offset, wantHandled)
	}
	if o, _ := ends.Lookup(messages.DLQTopic(in), 0); o.Offset != 0 {
		t.Errorf("%d dead letters, want none", o.Offset)
	}
	for _, r := range recs {
		o, ok := outs[r.key]
		if r.expired {
			if ok {
				t.Errorf("%s: expired, but an output was produced", r.key)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no output", r.key)
			continue
		}
		got := hdr(o, messages.HeaderDeadline)
		switch r.carried {
		case "clamped":
			d, clamped, err := messages.ParseDeadline([]byte(got), time.Now())
			if err != nil || clamped || d.After(time.Now().Add(messages.MaxDeadlineAhead)) {
				t.Errorf("%s: output deadline %q, want the clamped one (within %s)", r.key, got, messages.MaxDeadlineAhead)
			}
		default:
			if got != r.carried {
				t.Errorf("%s: output deadline %q, want %q", r.key, got, r.carried)
			}
		}
	}

	// The counter, the process spans and the expired checkpoint.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	if n := counterSum(rm, otelnames.MetricRequestsExpired); n != wantExpired {
		t.Errorf("%s = %d, want %d", otelnames.MetricRequestsExpired, n, wantExpired)
	}
	marked := 0
	for _, s := range spans.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == otelnames.DeadlineExpired && a.Value.AsBool() {
				marked++
			}
		}
	}
	if marked != wantExpired {
		t.Errorf("%d process spans marked %s, want %d", marked, otelnames.DeadlineExpired, wantExpired)
	}
	var expiredCount, inCount, expiredCohorts uint64
	for _, ps := range metrics.Pathways() {
		switch ps.Checkpoint.Direction {
		case pathway.Expired:
			if ps.Checkpoint.Edge() != in+" → dl (expired)" {
				t.Errorf("expired checkpoint edge %q", ps.Checkpoint.Edge())
			}
			expiredCount += ps.Edge.Count
			for _, b := range ps.Cohorts.Bins { // completeness: each ended
				expiredCohorts += b.Count
			}
		case pathway.In:
			inCount += ps.Edge.Count
		}
	}
	if expiredCount != wantExpired || inCount != uint64(len(recs)) || expiredCohorts != wantExpired {
		t.Errorf("pathway checkpoints: %d expired (%d counted by origin), %d in; want %d, %d", expiredCount, expiredCohorts, inCount, wantExpired, len(recs))
	}
}

// readAll returns the records of topic by key, polling until want keys
// arrived, then once more briefly for any beyond.
func readAll(t *testing.T, addr, topic string, want int) map[string]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r })
	}
	if len(got) < want {
		t.Fatalf("%s: %d records, want %d", topic, len(got), want)
	}
	return got
}

// counterSum returns the sum over the data points of the int64 counter name.
func counterSum(rm metricdata.ResourceMetrics, name string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}
