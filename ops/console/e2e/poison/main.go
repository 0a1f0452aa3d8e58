// SPDX-License-Identifier: Apache-2.0

// Command poison publishes one raw record to a Kafka topic: the console's
// browser test (console/e2e/console.test.mjs) uses it to put a poison record,
// with a key, value and headers of its choosing, on the requests topic, for
// the retrieval stage to dead-letter. kretrieve's own producers only write
// valid requests.
//
//	poison --brokers 127.0.0.1:9092 --topic retrieval.requests \
//	    --key K --value '{not json' --header name=value ...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// headerFlags collects repeated --header name=value flags in order.
type headerFlags []kgo.RecordHeader

// String implements flag.Value.
func (h *headerFlags) String() string { return fmt.Sprint(len(*h), " headers") }

// Set implements flag.Value: name=value, the value may contain '='.
func (h *headerFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("header %q: want name=value", s)
	}
	*h = append(*h, kgo.RecordHeader{Key: k, Value: []byte(v)})
	return nil
}

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated bootstrap brokers")
	topic := flag.String("topic", "retrieval.requests", "topic to publish to")
	key := flag.String("key", "", "record key")
	value := flag.String("value", "{not json", "record value")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for the broker's acknowledgement")
	var headers headerFlags
	flag.Var(&headers, "header", "record header name=value (repeatable)")
	flag.Parse()

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "poison:", err)
		os.Exit(1)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r := &kgo.Record{Topic: *topic, Key: []byte(*key), Value: []byte(*value), Headers: headers}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		fmt.Fprintln(os.Stderr, "poison:", err)
		os.Exit(1)
	}
	fmt.Printf("%s [%d] @%d\n", r.Topic, r.Partition, r.Offset)
}
