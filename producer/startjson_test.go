// SPDX-License-Identifier: Apache-2.0

package producer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
)

// TestStartJSONChecksOnceAndPublishesWhatItChecked: a body that breaks the
// request contract is refused with the decoder's error before a span starts
// or a record is written; a valid one is published as EncodeRequest writes
// the request it decodes to.
func TestStartJSONChecksOnceAndPublishesWhatItChecked(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	topic := messages.DefaultRequestsTopic
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	c := producer.NewClient(t.Context(), producer.NewPublisher(cl, topic), nil, producer.WithTracerProvider(tp))

	for _, body := range []string{`{"query":"gzip","top_k":0}`, `{"query":`} {
		_, err := c.StartJSON(t.Context(), []byte(body), false)
		var (
			ve *messages.ValidationError
			de *messages.DecodeError
		)
		if !errors.As(err, &ve) && !errors.As(err, &de) {
			t.Errorf("%s: %v, want the request contract's error", body, err)
		}
	}
	if n := len(spans.Started()); n != 0 {
		t.Errorf("refused bodies started %d spans", n)
	}

	call, err := c.StartJSON(t.Context(), []byte(`{"query":"gzip","top_k":3,"request_id":"r-json"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := call.Acked(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := messages.EncodeRequest(messages.Request{RequestID: "r-json", Query: "gzip", TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	fetches := consumer.PollFetches(ctx)
	if err := fetches.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fetches.Records()
	if len(recs) != 1 || string(recs[0].Value) != string(want) || string(recs[0].Key) != "r-json" {
		t.Fatalf("published %d records, first %+v; want one keyed r-json holding %s", len(recs), recs, want)
	}
}
