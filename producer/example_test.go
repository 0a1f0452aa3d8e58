// SPDX-License-Identifier: Apache-2.0

package producer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/topology"
)

// A Client publishes a request and waits for its outcome: the result the
// pipeline publishes, or its dead letter. Here the pipeline is a fake
// worker answering every request with one document, and the broker an
// in-process kfake cluster.
func ExampleClient() {
	topics := messages.DefaultTopics()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics.All()...))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	clientOpts := []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)}
	ctx := context.Background()

	workerDone := fakeWorker(ctx, clientOpts, topics)
	defer workerDone()

	tracer := kafkatrace.New() // the global tracer provider: a no-op unless set
	pub, err := kgo.NewClient(append(clientOpts, kgo.WithHooks(tracer))...)
	if err != nil {
		panic(err)
	}
	col, err := results.NewCollector(ctx, clientOpts, tracer, topology.Default(topics))
	if err != nil {
		panic(err)
	}
	client := producer.NewClient(ctx, producer.NewPublisher(pub, topics.Requests), col)
	defer client.Close(ctx)

	call, err := client.Start(ctx, messages.Request{RequestID: "req-1", Query: "consumer groups"}, true)
	if err != nil {
		panic(err)
	}
	out, err := call.Wait(ctx, 30*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: failed=%t, %d document: %s\n", out.RequestID, out.Failed, len(out.Result.Documents), out.Result.Documents[0].Title)
	// Output:
	// req-1: failed=false, 1 document: About consumer groups
}

// fakeWorker answers the requests of topics.Requests on topics.Results
// until the returned function is called; it returns when the worker has
// stopped.
func fakeWorker(ctx context.Context, clientOpts []kgo.Opt, topics messages.Topics) func() {
	cl, err := kgo.NewClient(append(clientOpts, kgo.ConsumeTopics(topics.Requests))...)
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				req, err := messages.DecodeRequestKeyed(r.Value, r.Key)
				if err != nil {
					return
				}
				value, err := messages.EncodeResult(messages.Result{RequestID: req.RequestID,
					Documents: []messages.Document{{ID: "doc-1", Title: "About " + req.Query}}})
				if err != nil {
					return
				}
				// The result carries the request's correlation header back:
				// the Client hands it only to the call it belongs to.
				var hs []kgo.RecordHeader
				for _, h := range r.Headers {
					if h.Key == messages.HeaderCorrelation {
						hs = append(hs, h)
					}
				}
				cl.Produce(ctx, &kgo.Record{Topic: topics.Results, Key: r.Key, Value: value, Headers: hs}, nil)
			})
		}
	}()
	return func() {
		stop()
		<-done
		cl.Close()
	}
}
