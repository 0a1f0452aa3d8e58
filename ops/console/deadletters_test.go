// SPDX-License-Identifier: Apache-2.0

package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/pipeline"
)

// letterEnv is the embedded broker with the pipeline's topics and n dead
// letters on the requests' dead-letter topic, each with a value of
// valueBytes and a header and reason of textBytes. It returns the
// pipeline.
func letterEnv(t *testing.T, n, valueBytes, textBytes int) *pipeline.Pipeline {
	t.Helper()
	ctx := context.Background()
	b := brokertest.NewBroker(t, 2)
	p, err := pipeline.New(pipeline.Config{Kafka: kafkaclient.Config{Brokers: []string{b.Addr()}, ClientID: "test", Partitions: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EnsureTopics(ctx); err != nil {
		t.Fatal(err)
	}
	client, err := kgo.NewClient(append(p.ClientOptions(), kgo.ProducerBatchMaxBytes(4<<20))...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for i := range n {
		rec := &kgo.Record{Topic: p.Topology().Requests(), Key: []byte(fmt.Sprintf("letter-%d", i)),
			Value:   []byte(strings.Repeat("v", valueBytes)),
			Headers: []kgo.RecordHeader{{Key: "x-big", Value: []byte(strings.Repeat("h", textBytes))}}}
		letter := deadletters.Build(rec, deadletters.Failure{Reason: fmt.Sprintf("reason %d %s", i%3, strings.Repeat("r", textBytes)),
			ErrorType: deadletters.ErrorTypePermanent, Attempts: 1, ConsumerGroup: "retrieval"}, 0)
		if err := client.ProduceSync(ctx, letter).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// Issue 25 #8 (F3): ?limit=1 over many large letters answers with one
// letter whose texts are cut, no value: what a list keeps is bounded by its
// limit, not by what the topic holds.
func TestDeadLettersListKeepsOnlyWhatItShows(t *testing.T) {
	const letters, valueBytes, textBytes = 12, 256 << 10, 64 << 10
	p := letterEnv(t, letters, valueBytes, textBytes)
	con, err := console.New(console.Config{Topology: p.Topology(), KafkaOptions: p.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	srv := newServer(t, con)
	code, _, b := call(t, "GET", srv+"/api/deadletters?limit=1", "")
	var doc struct {
		Letters []struct {
			Reason     string
			ValueBytes int `json:"value_bytes"`
			Headers    []struct{ Key, Value string }
		}
		Reasons []struct{ Count int }
		Total   int
	}
	if err := json.Unmarshal(b, &doc); err != nil || code != http.StatusOK {
		t.Fatalf("%d %.300s: %v", code, b, err)
	}
	t.Logf("answer: %d bytes, %d letters of %d read, %d reasons", len(b), len(doc.Letters), doc.Total, len(doc.Reasons))
	if doc.Total != letters || len(doc.Letters) != 1 || len(doc.Reasons) != 3 {
		t.Fatalf("total %d, letters %d, reasons %d; want %d, 1, 3", doc.Total, len(doc.Letters), len(doc.Reasons), letters)
	}
	l := doc.Letters[0]
	if l.ValueBytes != valueBytes {
		t.Errorf("value_bytes %d, want %d", l.ValueBytes, valueBytes)
	}
	if len(b) > 16<<10 || len(l.Reason) > 2<<10 {
		t.Errorf("answer of %d bytes, reason of %d: want the letter's texts cut (under 16 KiB, reason under 2 KiB)", len(b), len(l.Reason))
	}
	for _, h := range l.Headers {
		if len(h.Value) > 2<<10 {
			t.Errorf("header %s: %d bytes listed, want it cut", h.Key, len(h.Value))
		}
	}
}

// fetchGate blocks the fetches of dead-letter topics until it is opened.
type fetchGate struct {
	open chan struct{}
	once sync.Once
}

func (g *fetchGate) OnFetchBatchRead(_ kgo.BrokerMetadata, topic string, _ int32, _ kgo.FetchBatchMetrics) {
	if strings.HasSuffix(topic, ".dlq") {
		<-g.open
	}
}

func (g *fetchGate) release() { g.once.Do(func() { close(g.open) }) }

// Issue 25 #8 (F3): dead-letter lists read at once are bounded: while the
// reads in progress hang, more requests are answered 503 busy at once.
func TestDeadLettersReadsAreBounded(t *testing.T) {
	p := letterEnv(t, 4, 1<<10, 16)
	gate := &fetchGate{open: make(chan struct{})}
	defer gate.release()
	con, err := console.New(console.Config{Topology: p.Topology(), KafkaOptions: append(p.ClientOptions(), kgo.WithHooks(gate))})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	srv := newServer(t, con)
	const requests = 8
	codes := make(chan int, requests)
	client := &http.Client{Timeout: 20 * time.Second}
	for range requests {
		go func() {
			resp, err := client.Get(srv + "/api/deadletters?limit=1")
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	var busy int
	quick := poll.Wait(10*time.Second, func() bool {
		for {
			select {
			case c := <-codes:
				if c == http.StatusServiceUnavailable {
					busy++
				} else {
					t.Errorf("answer %d while the reads hang", c)
				}
			default:
				return busy >= requests-2
			}
		}
	})
	t.Logf("%d of %d answered 503 busy while the reads hang", busy, requests)
	if !quick {
		t.Fatalf("%d of %d requests refused within 10 s while %d reads hang; want all but 2", busy, requests, requests-busy)
	}
	gate.release()
	for range requests - busy {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("a read in progress answered %d, want 200", c)
		}
	}
}

// newServer serves con on 127.0.0.1 until the test ends and returns its URL.
func newServer(t *testing.T, con http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(con)
	t.Cleanup(srv.Close)
	return srv.URL
}
