// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/lag"
)

// Three requests were published an hour ago; the retrieval group has
// processed the first one.
func ExampleMeasure() {
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx := context.Background()
	opts := []kgo.Opt{kgo.SeedBrokers(b.Addr())}

	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic("requests"))...)
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "requests"); err != nil {
		panic(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	for i := range 3 {
		r := &kgo.Record{Value: fmt.Appendf(nil, "request %d", i), Timestamp: hourAgo.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			panic(err)
		}
	}
	var processed kadm.Offsets
	processed.Add(kadm.Offset{Topic: "requests", Partition: 0, At: 1, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "retrieval", processed); err != nil {
		panic(err)
	}

	lags, err := lag.Measure(ctx, opts, "retrieval")
	if err != nil {
		panic(err)
	}
	for _, l := range lags {
		age := time.Duration(l.Seconds * float64(time.Second))
		fmt.Printf("%s %s/%d: %d records behind, the oldest waiting for %s\n", l.Group, l.Topic, l.Partition, l.Records, age.Round(time.Minute))
	}
	// Output:
	// retrieval requests/0: 2 records behind, the oldest waiting for 1h0m0s
}
