// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/kafkapython"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// produceThrough creates topic (one partition) on brokers and produces
// values to it through kafkaclient.Options(c).
func produceThrough(t *testing.T, c kafkaclient.Config, topic string, values ...string) {
	t.Helper()
	c.Partitions = 1
	client, err := kgo.NewClient(append(kafkaclient.Options(c, nil, nil), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := kafkaclient.EnsureTopics(t.Context(), client, c, topic); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := client.ProduceSync(t.Context(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// compressible is a value every codec shrinks (franz-go sends a batch
// uncompressed when compressing does not make it smaller).
func compressible(i int) string {
	return fmt.Sprintf("%d:%s", i, strings.Repeat("the same retrieval result, again and again. ", 100))
}

// TestCompressionRoundTrips: each codec reaches the wire (the fetched
// batches carry its compression attribute) and reads back; the default is
// none.
func TestCompressionRoundTrips(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	attr := map[string]uint8{"": 0, "none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
	for _, name := range append([]string{""}, kafkaclient.Compressions...) {
		t.Run("codec "+name, func(t *testing.T) {
			c := kafkaclient.Config{Brokers: []string{b.Addr()}, Compression: name}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			topic := "compression-" + name
			produceThrough(t, c, topic, compressible(0), compressible(1))
			consumer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Close()
			var got []*kgo.Record
			for len(got) < 2 {
				fs := consumer.PollFetches(t.Context())
				if err := fs.Err0(); err != nil {
					t.Fatal(err)
				}
				got = append(got, fs.Records()...)
			}
			for i, r := range got {
				if string(r.Value) != compressible(i) {
					t.Errorf("record %d: %.20q", i, r.Value)
				}
				if ct := r.Attrs.CompressionType(); ct != attr[name] {
					t.Errorf("record %d: compression attribute %d, want %d", i, ct, attr[name])
				}
			}
		})
	}
}

func TestCompressionValidated(t *testing.T) {
	err := kafkaclient.Config{Compression: "brotli"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "compression") || !strings.Contains(err.Error(), "zstd") {
		t.Fatalf("err = %v, want one naming compression and the codecs", err)
	}
	if got := (kafkaclient.Config{}).WithDefaults().Compression; got != "none" {
		t.Fatalf("default compression %q, want none", got)
	}
}

// readWithKafkaPython consumes n values of topic with kafka-python and
// returns them, or its output when it fails.
// python-snappy is hidden (an import of snappy fails), so the consumer is
// the plain one whether or not the machine has python-snappy.
const readWithKafkaPython = `
import json, sys
sys.modules["snappy"] = None
from kafka import KafkaConsumer
consumer = KafkaConsumer(sys.argv[2], bootstrap_servers=sys.argv[1], auto_offset_reset="earliest",
    enable_auto_commit=False, consumer_timeout_ms=20000, api_version=(2, 5, 0))
values = []
for m in consumer:
    values.append(m.value.decode())
    if len(values) == int(sys.argv[3]):
        break
print(json.dumps(values))
`

// TestPlainKafkaPythonReadsTheDefault: a kafka-python consumer without
// python-snappy, the seed's client, reads what kretrieve produces with the
// default settings (issue 14, finding 7: franz-go's default, snappy, made
// it fail with "Libraries for snappy compression codec not found"). The
// same consumer fails on snappy batches, so the test would catch a return
// to that default.
func TestPlainKafkaPythonReadsTheDefault(t *testing.T) {
	python := kafkapython.Python(t, "the plain-consumer test")
	b := brokertest.NewBroker(t, 1)
	values := []string{compressible(0), compressible(1), compressible(2)}
	produceThrough(t, kafkaclient.Config{Brokers: []string{b.Addr()}}, "retrieval.results", values...)
	produceThrough(t, kafkaclient.Config{Brokers: []string{b.Addr()}, Compression: "snappy"}, "snappy.results", values...)

	read := func(topic string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		return exec.CommandContext(ctx, python, "-c", readWithKafkaPython, b.Addr(), topic, fmt.Sprint(len(values))).CombinedOutput()
	}
	out, err := read("retrieval.results")
	if err != nil {
		t.Fatalf("kafka-python on the default: %v\n%s", err, out)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("kafka-python printed %q: %v", out, err)
	}
	if strings.Join(got, "|") != strings.Join(values, "|") {
		t.Fatalf("kafka-python read %d values, not the %d produced", len(got), len(values))
	}
	out, err = read("snappy.results")
	if err == nil || !strings.Contains(string(out), "Libraries for snappy compression codec not found") {
		t.Fatalf("kafka-python without python-snappy read snappy batches (err %v): the control does not hold\n%s", err, out)
	}
}
