// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// A Worker consumes a topic as a member of a consumer group and runs a
// Handler on each record inside its middleware: the runtime's own (tracing,
// dead-lettering, recover, limits, retry) and any added with
// WithMiddleware, here one that prints what it sees. The handler's output
// records are published, and the input's offset committed once they are
// acknowledged. The broker is an in-process kfake cluster.
func ExampleWorker() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "words", "shouts"))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	clientOpts := []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)}

	shout := func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		return []*kgo.Record{{Topic: "shouts", Value: bytes.ToUpper(msg.Record.Value)}}, nil
	}
	printed := func(next consumers.Handler) consumers.Handler {
		return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
			fmt.Printf("attempt %d: %s\n", msg.Attempt, msg.Record.Value)
			return next(ctx, msg)
		}
	}
	w, err := consumers.New(consumers.Config{Group: "shouters", Topic: "words"},
		kafkatrace.New(kafkatrace.WithConsumerGroup("shouters")), shout, clientOpts,
		consumers.WithMiddleware(printed), consumers.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- w.Run(ctx) }()

	client, err := kgo.NewClient(append(clientOpts, kgo.ConsumeTopics("shouts"))...)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	if err := client.ProduceSync(ctx, &kgo.Record{Topic: "words", Value: []byte("hello")}).FirstErr(); err != nil {
		panic(err)
	}
	var out []*kgo.Record
	for len(out) == 0 {
		out = client.PollFetches(ctx).Records()
	}
	fmt.Printf("shouts: %s\n", out[0].Value)

	stop()
	fmt.Println("stopped:", <-stopped, "processed:", w.Processed())
	// Output:
	// attempt 1: hello
	// shouts: HELLO
	// stopped: <nil> processed: 1
}
