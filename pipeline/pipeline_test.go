// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
)

const resultTimeout = 20 * time.Second

// sendAndWait starts one call per query and waits for every outcome.
func sendAndWait(t *testing.T, c *producer.Client, queries []string) []results.Outcome {
	t.Helper()
	calls := make([]*producer.Call, len(queries))
	for i, q := range queries {
		call, err := c.Start(t.Context(), messages.Request{Query: q, TopK: 5}, true)
		if err != nil {
			t.Fatal(err)
		}
		calls[i] = call
	}
	outs := make([]results.Outcome, len(calls))
	for i, call := range calls {
		out, err := call.Wait(t.Context(), resultTimeout)
		if err != nil {
			t.Fatalf("request %s: %v", call.Request.RequestID, err)
		}
		if out.Failed {
			t.Fatalf("request %s dead-lettered on %s: %s", call.Request.RequestID, out.Topic, out.Reason)
		}
		if out.RequestID != call.Request.RequestID || out.TraceID != call.TraceID {
			t.Fatalf("outcome %s (trace %s) for call %s (trace %s)", out.RequestID, out.TraceID, call.Request.RequestID, call.TraceID)
		}
		outs[i] = out
	}
	return outs
}

func TestEveryRequestIsOneConnectedTrace(t *testing.T) {
	h := newHarness(t, 6)
	stop := h.startWorkers()
	c := h.client(true)

	queries := []string{"parse a URL query string", "compress data with gzip", "encode JSON", "sort a slice", "regular expression"}
	var all []string
	for i := 0; i < 8; i++ {
		all = append(all, queries...)
	}
	outs := sendAndWait(t, c, all)
	for _, out := range outs {
		if len(out.Result.Documents) == 0 {
			t.Fatalf("request %s: no documents", out.RequestID)
		}
		if st := out.Result.Timings.Stages; len(st) != 2 || st[0].Stage != messages.StageRetrieval || st[0].WorkMS <= 0 ||
			st[1].Stage != messages.StageEnrichment || st[1].WorkMS <= 0 {
			t.Errorf("request %s: timings %+v", out.RequestID, out.Result.Timings)
		}
	}
	if top := outs[0].Result.Documents[0]; top.ID != "net/url" || !strings.Contains(strings.ToLower(top.Snippet), "url") {
		t.Errorf("top document for %q = %+v, want net/url with a snippet", all[0], top)
	}
	// Stop everything so every span (including late acks) has ended.
	stop()
	_ = c.Close(context.Background())

	traces := byTrace(h.recorded())
	if len(traces) != len(all) {
		t.Fatalf("%d traces for %d requests", len(traces), len(all))
	}
	for _, out := range outs {
		spans, ok := traces[out.TraceID]
		if !ok {
			t.Fatalf("no trace %s for request %s", out.TraceID, out.RequestID)
		}
		checkTrace(t, spans, h.cfg, "request")
	}
	// No query text in any attribute: only lengths and hashes.
	for _, s := range h.recorded() {
		for k, v := range s.Attrs {
			for _, q := range queries {
				if str, ok := v.(string); ok && strings.Contains(str, q) {
					t.Fatalf("%s: attribute %s carries the query text", s.Name, k)
				}
			}
		}
		if s.Name == "search" || s.Name == "request" {
			for _, k := range []string{"kretrieve.query.length", "kretrieve.query.hash", "kretrieve.request.id"} {
				if _, ok := s.Attrs[k]; !ok {
					t.Errorf("%s: %s missing", s.Name, k)
				}
			}
		}
	}
	if d := c.Collector.Duplicates(); d != 0 {
		t.Errorf("duplicates = %d on a run without failures", d)
	}

	// The queue-wait histogram has a series per topic, partition and group.
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	groups := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "kretrieve.messaging.queue_wait.duration" {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("queue wait unit %q", m.Unit)
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				topic, _ := dp.Attributes.Value("messaging.destination.name")
				group, _ := dp.Attributes.Value("messaging.consumer.group.name")
				if _, ok := dp.Attributes.Value("messaging.destination.partition.id"); !ok {
					t.Errorf("queue wait point without partition: %v", dp.Attributes)
				}
				groups[topic.AsString()+"/"+group.AsString()] += dp.Count
			}
		}
	}
	for _, k := range []string{"retrieval.requests/retrieval", "retrieval.candidates/enrichment", "retrieval.results/"} {
		if groups[k] != uint64(len(all)) {
			t.Errorf("queue wait count %s = %d, want %d (all: %v)", k, groups[k], len(all), groups)
		}
	}

	// The semconv messaging metrics count every record of every topic.
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != kafkatrace.ScopeName {
			continue // kotel's client metrics
		}
		for _, m := range sm.Metrics {
			add := func(attrs attribute.Set, n int64) {
				topic, _ := attrs.Value("messaging.destination.name")
				op, _ := attrs.Value("messaging.operation.name")
				if sys, _ := attrs.Value("messaging.system"); sys.AsString() != "kafka" {
					t.Errorf("%s: messaging.system %v", m.Name, sys)
				}
				counts[m.Name+"/"+op.AsString()+"/"+topic.AsString()] += n
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					add(dp.Attributes, dp.Value)
				}
			case metricdata.Histogram[float64]:
				if !strings.HasPrefix(m.Name, "messaging.") {
					continue
				}
				for _, dp := range d.DataPoints {
					add(dp.Attributes, int64(dp.Count))
				}
			}
		}
	}
	for _, topic := range []string{"retrieval.requests", "retrieval.candidates", "retrieval.results"} {
		for _, k := range []string{
			"messaging.client.sent.messages/send/" + topic,
			"messaging.client.operation.duration/send/" + topic,
			"messaging.client.consumed.messages/process/" + topic,
			"messaging.process.duration/process/" + topic,
		} {
			if counts[k] != int64(len(all)) {
				t.Errorf("%s = %d, want %d", k, counts[k], len(all))
			}
		}
	}
}

func TestQueueWaitCoversConsumerPause(t *testing.T) {
	h := newHarness(t, 3)
	c := h.client(true)
	calls := make([]*producer.Call, 6)
	var lastAck time.Time
	for i := range calls {
		call, err := c.Start(t.Context(), messages.Request{Query: "gzip"}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := call.Acked(t.Context()); err != nil {
			t.Fatal(err)
		}
		lastAck = time.Now()
		calls[i] = call
	}
	// Every record is in Kafka now, and no consumer is: the consumer's
	// pause lasts from the acks until the workers start. Each wait span must
	// cover it, which asserts the wait's interval whatever its length
	// (no fixed sleep needed to make it long).
	workersStart := time.Now()
	stop := h.startWorkers()
	for _, call := range calls {
		if _, err := call.Wait(t.Context(), resultTimeout); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	n := 0
	for _, s := range h.recorded() {
		if s.Name != "wait retrieval.requests" {
			continue
		}
		n++
		if s.Start.After(lastAck) || s.End.Before(workersStart) {
			t.Errorf("wait span %v..%v does not cover the pause from the last ack at %v to the workers' start at %v", s.Start, s.End, lastAck, workersStart)
		}
		pause := workersStart.Sub(lastAck)
		if ms, _ := s.Attrs["kretrieve.queue_wait.ms"].(float64); ms < float64(pause)/float64(time.Millisecond) {
			t.Errorf("queue_wait.ms %v < the %v pause", ms, pause)
		}
	}
	if n != len(calls) {
		t.Fatalf("%d wait spans, want %d", n, len(calls))
	}
}

// rawProducer is a client without kretrieve's hooks: it produces records the
// way a user's Python or Java producer would.
func rawProducer(t *testing.T, h *harness) *kgo.Client {
	cl, err := kgo.NewClient(kafkaclient.Options(h.cfg.Kafka, h.logger, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestForeignProducerTraceIsContinued(t *testing.T) {
	h := newHarness(t, 6)
	h.startWorkers()
	c := h.client(true)
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	done := c.Collector.Expect("py-1")
	rec := &kgo.Record{
		Topic: h.cfg.Topology().Requests(),
		Key:   []byte("py-1"),
		Value: []byte(`{"request_id": "py-1", "query": "read a zip archive", "top_k": 3, "client": "python"}`),
		Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-" + traceID + "-" + spanID + "-01")},
			{Key: "baggage", Value: []byte("tenant=acme")},
		},
	}
	if err := rawProducer(t, h).ProduceSync(t.Context(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if out.Failed || out.TraceID != traceID || len(out.Result.Documents) != 3 {
			t.Fatalf("outcome %+v", out)
		}
	case <-time.After(resultTimeout):
		t.Fatal("no result")
	}
	// process+wait+search, send/wait/process+3 enrichment steps,
	// send/wait/process: the last send span ends at its acknowledgement,
	// which may trail the result.
	eventually(t, func() bool { return len(byTrace(h.recorded())[traceID]) == 12 }, "12 spans in trace %s", traceID)
	trace := byTrace(h.recorded())[traceID]
	var proc *span
	for i := range trace {
		if trace[i].Name == "process retrieval.requests" {
			proc = &trace[i]
		}
	}
	if proc == nil {
		t.Fatalf("no process span in trace %s: %v", traceID, trace)
	}
	if proc.ParentID != spanID || len(proc.Links) != 1 || proc.Links[0] != spanID {
		t.Fatalf("process span parent %s links %v, want %s", proc.ParentID, proc.Links, spanID)
	}
}

func TestMalformedTraceHeadersStartNewRoot(t *testing.T) {
	h := newHarness(t, 1)
	h.startWorkers()
	c := h.client(true)
	done := c.Collector.Expect("bad-tp")
	rec := &kgo.Record{
		Topic:   h.cfg.Topology().Requests(),
		Key:     []byte("bad-tp"),
		Value:   []byte(`{"request_id":"bad-tp","query":"gzip"}`),
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")}},
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
	if out.Failed || out.TraceID == "" || out.TraceID == "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("outcome %+v", out)
	}
	for _, s := range byTrace(h.recorded())[out.TraceID] {
		if s.Name == "process retrieval.requests" {
			if s.ParentID != "" || len(s.Links) != 0 || s.Attrs["kretrieve.trace_context.invalid"] != true {
				t.Fatalf("process span %+v", s)
			}
			return
		}
	}
	t.Fatal("no process span")
}

func TestUndecodableRequestIsDeadLetteredAndPartitionMovesOn(t *testing.T) {
	h := newHarness(t, 1)
	h.startWorkers()
	c := h.client(true)
	raw := rawProducer(t, h)

	bad := map[string]string{
		"bad-json":  `{"query": `,
		"bad-topk":  `{"request_id":"bad-topk","query":"gzip","top_k":1000}`,
		"bad-query": `{"request_id":"bad-query","query":""}`,
	}
	waits := map[string]<-chan results.Outcome{}
	for id, body := range bad {
		waits[id] = c.Collector.Expect(id)
		if err := raw.ProduceSync(t.Context(), &kgo.Record{Topic: h.cfg.Topology().Requests(), Key: []byte(id), Value: []byte(body)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A good request behind the bad ones on the same (only) partition completes.
	sendAndWait(t, c, []string{"compress data with gzip"})
	for id, ch := range waits {
		select {
		case out := <-ch:
			if !out.Failed || out.Topic != "retrieval.requests.dlq" || out.Reason == "" {
				t.Fatalf("%s: outcome %+v", id, out)
			}
		case <-time.After(resultTimeout):
			t.Fatalf("%s: no dead letter", id)
		}
	}

	// The dead letters keep key, value and trace headers and say why.
	cl, err := kgo.NewClient(append(kafkaclient.Options(h.cfg.Kafka, h.logger, nil),
		kgo.ConsumeTopics("retrieval.requests.dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(t.Context(), resultTimeout)
	defer cancel()
	for len(got) < len(bad) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r })
	}
	for id, body := range bad {
		r := got[id]
		if r == nil {
			t.Fatalf("dead letter %s not found", id)
		}
		if string(r.Value) != body {
			t.Errorf("%s: value %q, want %q", id, r.Value, body)
		}
		hdr := map[string]string{}
		for _, hd := range r.Headers {
			hdr[hd.Key] = string(hd.Value)
		}
		for k, want := range map[string]string{
			deadletters.HeaderErrorType:         "permanent",
			deadletters.HeaderOriginalTopic:     "retrieval.requests",
			deadletters.HeaderOriginalPartition: "0",
			deadletters.HeaderAttempts:          "1",
			deadletters.HeaderConsumerGroup:     "retrieval",
		} {
			if hdr[k] != want {
				t.Errorf("%s: header %s = %q, want %q", id, k, hdr[k], want)
			}
		}
		for _, k := range []string{deadletters.HeaderReason, deadletters.HeaderOriginalOffset, deadletters.HeaderOriginalTimestamp, "traceparent"} {
			if hdr[k] == "" {
				t.Errorf("%s: header %s missing", id, k)
			}
		}
	}
	if !strings.Contains(hdrValue(got["bad-topk"], deadletters.HeaderReason), "top_k") {
		t.Errorf("bad-topk reason %q does not name the field", hdrValue(got["bad-topk"], deadletters.HeaderReason))
	}

	// A dead letter's send span is a child of the failed process span and
	// links the producer's span found in the failed record's headers.
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	linked := c.Collector.Expect("bad-traced")
	if err := raw.ProduceSync(t.Context(), &kgo.Record{Topic: h.cfg.Topology().Requests(), Key: []byte("bad-traced"), Value: []byte("{"),
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-" + tid + "-" + sid + "-01")}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-linked:
	case <-time.After(resultTimeout):
		t.Fatal("no dead letter for bad-traced")
	}
	eventually(t, func() bool {
		for _, s := range byTrace(h.recorded())[tid] {
			if s.Name == "send retrieval.requests.dlq" {
				return true
			}
		}
		return false
	}, "dead-letter send span in trace %s", tid)
	spans := byTrace(h.recorded())[tid]
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	for _, s := range spans {
		if s.Name != "send retrieval.requests.dlq" {
			continue
		}
		if byID[s.ParentID].Name != "process retrieval.requests" || len(s.Links) != 1 || s.Links[0] != sid || s.Kind != "producer" {
			t.Fatalf("dead-letter send span: parent %q links %v kind %s", byID[s.ParentID].Name, s.Links, s.Kind)
		}
	}

	// The committed offset moves past all of them.
	want := int64(len(bad) + 2)
	eventually(t, func() bool { return committed(t, h, "retrieval", h.cfg.Topology().Requests())[0] == want },
		"committed offset of partition 0 reaches %d", want)
}

// committed returns the group's committed offsets of topic by partition.
func committed(t *testing.T, h *harness, group, topic string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kafkaclient.Options(h.cfg.Kafka, h.logger, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}

// eventually waits up to 10 s for cond (see poll.Until).
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	poll.Until(t, 10*time.Second, cond, format, args...)
}

func hdrValue(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
