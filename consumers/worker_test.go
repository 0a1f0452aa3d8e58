// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
)

// echo decodes a request and publishes its request id to topic out.
func echo(out string) consumers.Handler {
	return func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		req, err := messages.DecodeRequestKeyed(msg.Record.Value, msg.Record.Key)
		if err != nil {
			return nil, err
		}
		return []*kgo.Record{{Topic: out, Key: msg.Record.Key, Value: []byte(req.RequestID)}}, nil
	}
}

// hostileEnv is a broker with an input topic (accepting records up to
// 8 MiB, as a topic that takes big records would), its dead-letter topic
// (max.message.bytes dlqMax, or the broker's default when empty) and an
// output topic, and a worker running echo on them with hostileConfig and
// opts.
type hostileEnv struct {
	t        *testing.T
	addr     string
	in       string
	producer *kgo.Client
	worker   *consumers.Worker
	spans    *tracetest.SpanRecorder
}

func newHostileEnv(t *testing.T, in, dlqMax string, opts ...consumers.Option) *hostileEnv {
	t.Helper()
	addr := brokertest.NewBroker(t, 1).Addr()
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerBatchMaxBytes(8<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	adm := kadm.NewClient(producer)
	big := "8388608"
	create := func(topic string, maxBytes *string) {
		var cfg map[string]*string
		if maxBytes != nil {
			cfg = map[string]*string{"max.message.bytes": maxBytes}
		}
		if _, err := adm.CreateTopic(t.Context(), 1, -1, cfg, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	create(in, &big)
	if dlqMax != "" {
		create(messages.DLQTopic(in), &dlqMax)
	} else {
		create(messages.DLQTopic(in), nil)
	}
	create(in+".out", nil)

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithConsumerGroup("hostile"), kafkatrace.WithServerAddress(addr))
	opts = append([]consumers.Option{consumers.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))}, opts...)
	w, err := consumers.New(hostileConfig(in), tracer, echo(in+".out"), []kgo.Opt{kgo.SeedBrokers(addr)}, opts...)
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
	return &hostileEnv{t: t, addr: addr, in: in, producer: producer, worker: w, spans: spans}
}

// hostileConfig is the Config of a hostileEnv's worker consuming in.
func hostileConfig(in string) consumers.Config {
	return consumers.Config{Group: "hostile", Topic: in, RetryBackoff: time.Millisecond}
}

func (e *hostileEnv) produce(recs ...*kgo.Record) {
	e.t.Helper()
	for _, r := range recs {
		r.Topic = e.in
		if err := e.producer.ProduceSync(e.t.Context(), r).FirstErr(); err != nil {
			e.t.Fatalf("produce %s: %v", r.Key, err)
		}
	}
}

// read returns the records of topic by key, polling until want keys arrived.
func (e *hostileEnv) read(topic string, want int) map[string]*kgo.Record {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(e.t.Context(), 20*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r })
	}
	if len(got) < want {
		e.t.Fatalf("%s: %d records, want %d", topic, len(got), want)
	}
	return got
}

// waitCommitted waits until the group's committed offset of the input reaches want.
func (e *hostileEnv) waitCommitted(want int64) {
	e.t.Helper()
	adm := kadm.NewClient(e.producer)
	poll.Until(e.t, 20*time.Second, func() bool {
		resp, err := adm.FetchOffsets(e.t.Context(), "hostile")
		if err != nil {
			return false
		}
		o, ok := resp.Lookup(e.in, 0)
		return ok && o.At == want
	}, "committed offset of %s did not reach %d", e.in, want)
}

// hdr returns the value of r's header key, or "".
func hdr(r *kgo.Record, key string) string {
	v, _ := dlHeader(r, key)
	return v
}

// dlHeader returns the value of r's header key and whether it is there.
func dlHeader(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

func manyHeaders(n, size int) []kgo.RecordHeader {
	hs := make([]kgo.RecordHeader, n)
	for i := range hs {
		hs[i] = kgo.RecordHeader{Key: "h" + strconv.Itoa(i), Value: bytes.Repeat([]byte{'x'}, size)}
	}
	return hs
}

// TestHostileRecordsAreDeadLettered sends records beyond the worker's
// limits and with invalid UTF-8 through a real broker: each is
// dead-lettered with a reason (an oversized one as a truncated copy), its
// offset committed, and the record behind them is processed.
func TestHostileRecordsAreDeadLettered(t *testing.T) {
	e := newHostileEnv(t, "hostile.in", "")
	huge := append([]byte(`{"query":"`), bytes.Repeat([]byte{'q'}, 2<<20)...)
	huge = append(huge, `"}`...)
	hostile := []struct {
		rec    *kgo.Record
		reason string
	}{
		{&kgo.Record{Key: []byte("oversized"), Value: huge, Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")}}},
			"record key and value: " + strconv.Itoa(len("oversized")+len(huge)) + " bytes, over the limit of 1048576"},
		{&kgo.Record{Key: []byte("many-headers"), Value: []byte(`{"query":"gzip"}`), Headers: manyHeaders(100, 1)},
			"record headers: 100 headers, over the limit of 64"},
		{&kgo.Record{Key: []byte("huge-headers"), Value: []byte(`{"query":"gzip"}`), Headers: manyHeaders(2, 40<<10)},
			"record headers: 81924 bytes, over the limit of 65536"},
		{&kgo.Record{Key: []byte("bad-utf8-query"), Value: []byte("{\"query\":\"caf\xe9\"}")},
			"invalid request: query: must be valid utf-8"},
		{&kgo.Record{Key: []byte("bad-utf8-member"), Value: []byte("{\"query\":\"gzip\",\"tenant\":\"\xff\"}")},
			"decode request: invalid utf-8 at byte 26"},
	}
	for _, h := range hostile {
		e.produce(h.rec)
	}
	e.produce(&kgo.Record{Key: []byte("good"), Value: []byte(`{"query":"gzip"}`)})

	if out := e.read("hostile.in.out", 1); string(out["good"].Value) != "good" {
		t.Fatalf("output %q", out["good"].Value)
	}
	letters := e.read("hostile.in.dlq", len(hostile))
	for _, h := range hostile {
		key := string(h.rec.Key)
		dl := letters[key]
		if got := hdr(dl, deadletters.HeaderReason); got != h.reason {
			t.Errorf("%s: reason %q, want %q", key, got, h.reason)
		}
		if got := hdr(dl, deadletters.HeaderErrorType); got != deadletters.ErrorTypePermanent {
			t.Errorf("%s: error type %q", key, got)
		}
		if key == "oversized" {
			if got := hdr(dl, deadletters.HeaderTruncated); !strings.HasPrefix(got, "key=9/9 headers=1/1 value=") || !strings.HasSuffix(got, "/"+strconv.Itoa(len(huge))) {
				t.Errorf("oversized: %s = %q", deadletters.HeaderTruncated, got)
			}
			if len(dl.Value) < 900_000 || !bytes.HasPrefix(h.rec.Value, dl.Value) {
				t.Errorf("oversized: dead letter keeps %d bytes, not a prefix of the value of at least 900,000", len(dl.Value))
			}
			continue
		}
		if _, cut := dlHeader(dl, deadletters.HeaderTruncated); cut || !bytes.Equal(dl.Value, h.rec.Value) {
			t.Errorf("%s: dead letter value %q, want the original %q whole", key, dl.Value, h.rec.Value)
		}
		for _, oh := range h.rec.Headers {
			if hdr(dl, oh.Key) != string(oh.Value) {
				t.Errorf("%s: original header %s not kept", key, oh.Key)
			}
		}
	}
	e.waitCommitted(int64(len(hostile) + 1))
	if got := e.worker.DeadLettered(); got != int64(len(hostile)) {
		t.Errorf("DeadLettered() = %d, want %d", got, len(hostile))
	}

	// The reason is the process span's error too.
	for _, s := range e.spans.Ended() {
		if s.Name() == "process hostile.in" && s.Status().Code == codes.Error && s.Status().Description == hostile[0].reason {
			return
		}
	}
	t.Errorf("no process span with status %q", hostile[0].reason)
}

// TestDeadLetterRefusedAsTooLargeIsSentMinimal has the broker refuse a dead
// letter (its topic takes at most 64 KiB): the worker sends it again without
// the original value and headers, so it is still dead-lettered and committed.
func TestDeadLetterRefusedAsTooLargeIsSentMinimal(t *testing.T) {
	e := newHostileEnv(t, "tight.in", "65536")
	noise := make([]byte, 200<<10) // incompressible, and not JSON
	_, _ = rand.Read(noise)
	e.produce(
		&kgo.Record{Key: []byte("undecodable"), Value: noise, Headers: manyHeaders(3, 10)},
		&kgo.Record{Key: []byte("good"), Value: []byte(`{"query":"gzip"}`)},
	)
	e.read("tight.in.out", 1)
	dl := e.read("tight.in.dlq", 1)["undecodable"]
	if got := hdr(dl, deadletters.HeaderTruncated); got != "key=11/11 headers=0/3 value=0/204800" {
		t.Errorf("%s = %q", deadletters.HeaderTruncated, got)
	}
	if got := hdr(dl, deadletters.HeaderReason); !strings.HasPrefix(got, "decode request: ") {
		t.Errorf("reason %q", got)
	}
	e.waitCommitted(2)
}
