// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
)

// searchCall is one POST /v1/search of a paced load and its answer.
type searchCall struct {
	query   string
	status  int
	code    string // error code of a failed call
	traceID string
	took    time.Duration
}

// TestPartitionsAddedMidRun grows every pipeline topic (requests,
// candidates, results and both dead-letter topics) from 3 to 6 partitions
// while a paced load runs through the gateway, with a 1 s metadata
// interval. Every request is answered (a result, or a dead letter for the
// poison ones): no 504. The requests whose records went through a new
// partition of any topic are answered within the metadata interval plus
// a margin of 3 s (a rebalance of each worker group and processing under
// -race on a loaded machine); the README documents the interval.
func TestPartitionsAddedMidRun(t *testing.T) {
	const (
		before, added = 3, 3
		interval      = time.Second
		margin        = 3 * time.Second
		n, rate       = 200, 25 // 8 s of load
		grow          = n / 4   // requests sent before the topics grow
		poisonEvery   = 5
	)
	b := brokertest.NewBroker(t, before)
	h := newHarnessOn(t, b.Addr(), before)
	h.cfg.Kafka.MetadataMaxAge = interval
	topics := messages.DefaultTopics()
	h.runPoisonWorkers()
	waitAssigned(t, b.Addr(), messages.StageRetrieval, 1)
	waitAssigned(t, b.Addr(), messages.StageEnrichment, 1)
	srv, _ := h.gateway(gateway.Config{Timeout: 10 * time.Second})

	admCl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	grown := []string{topics.Requests, topics.Candidates, topics.Results, messages.DLQTopic(topics.Requests), messages.DLQTopic(topics.Candidates)}

	calls := make([]searchCall, n)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	for i := range n {
		if i == grow {
			resp, err := adm.CreatePartitions(t.Context(), added, grown...)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				t.Fatalf("create partitions: %v", err)
			}
		}
		<-tick.C
		q := "gzip reader"
		if i%poisonEvery == 0 {
			q = "poison gzip"
		}
		wg.Go(func() { calls[i] = searchOnce(t, srv.URL, q) })
	}
	wg.Wait()

	// The partitions each request's records went through, from its trace.
	parts := map[string]map[string]int{} // trace id -> topic -> partition
	for _, s := range h.recorded() {
		if !strings.HasPrefix(s.Name, "send ") {
			continue
		}
		p, err := strconv.Atoi(fmt.Sprint(s.Attrs["messaging.destination.partition.id"]))
		if err != nil {
			continue
		}
		if parts[s.TraceID] == nil {
			parts[s.TraceID] = map[string]int{}
		}
		parts[s.TraceID][fmt.Sprint(s.Attrs["messaging.destination.name"])] = p
	}
	onNew := map[string]int{} // topic -> requests that went through a new partition of it
	var slowest time.Duration
	for i, c := range calls {
		want, code := http.StatusOK, ""
		if i%poisonEvery == 0 {
			want, code = http.StatusBadGateway, "dead_lettered"
		}
		if c.status != want || c.code != code {
			t.Errorf("request %d (%q): %d %s, want %d %s", i, c.query, c.status, c.code, want, code)
			continue
		}
		fresh := false
		for topic, p := range parts[c.traceID] {
			if p >= before {
				onNew[topic]++
				fresh = true
			}
		}
		if fresh {
			slowest = max(slowest, c.took)
			if c.took > interval+margin {
				t.Errorf("request %d through a new partition (%v) answered after %v, over the interval %v + %v", i, parts[c.traceID], c.took, interval, margin)
			}
		}
	}
	t.Logf("requests through a new partition, by topic: %v; the slowest answered in %v", onNew, slowest)
	for _, topic := range []string{topics.Requests, topics.Candidates, topics.Results, messages.DLQTopic(topics.Requests)} {
		if onNew[topic] == 0 {
			t.Errorf("no request went through a new partition of %s: the test did not exercise it", topic)
		}
	}
	if got := get(t, srv.URL+"/readyz"); got != http.StatusOK {
		t.Errorf("/readyz %d after the load, want 200", got)
	}
}

// searchOnce posts one search and returns its answer.
func searchOnce(t *testing.T, url, query string) searchCall {
	body, _ := json.Marshal(map[string]any{"query": query, "top_k": 3})
	start := time.Now()
	resp, err := http.Post(url+"/v1/search", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Errorf("search: %v", err)
		return searchCall{query: query}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	c := searchCall{query: query, status: resp.StatusCode, took: time.Since(start)}
	var ans struct {
		TraceID string `json:"trace_id"`
		Error   *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		t.Errorf("search: status %d, body %q", resp.StatusCode, raw)
	}
	c.traceID = ans.TraceID
	if ans.Error != nil {
		c.code = ans.Error.Code
	}
	return c
}

// TestGatewayNotReadyWhileItsCollectorIsBehind holds the gateway
// collector's fetches while results keep arriving: /readyz turns 503,
// naming the results partition, within a few checks; released, the
// collector catches up and /readyz is 200 again.
func TestGatewayNotReadyWhileItsCollectorIsBehind(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	h := newHarnessOn(t, b.Addr(), 1)
	h.cfg.Kafka.MetadataMaxAge = 200 * time.Millisecond
	srv, _ := h.gateway(gateway.Config{})
	if got := get(t, srv.URL+"/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz %d at start, want 200", got)
	}

	// Only the collector fetches here: hold its fetches until released.
	var mu sync.Mutex
	release := make(chan struct{})
	holding := true
	cluster := b.Cluster()
	cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		hold := holding
		mu.Unlock()
		if hold {
			cluster.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	pub, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic(h.cfg.Topology().Results()))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	value, err := messages.EncodeResult(messages.Result{RequestID: "someone-elses"})
	if err != nil {
		t.Fatal(err)
	}
	var readyz readyzAnswer
	if !poll.Wait(30*time.Second, func() bool {
		if err := pub.ProduceSync(t.Context(), &kgo.Record{Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		readyz = getReadyz(t, srv.URL)
		return readyz.status == http.StatusServiceUnavailable
	}) {
		t.Fatalf("/readyz still %d after 30 s while the collector reads nothing", readyz.status)
	}
	if want := h.cfg.Topology().Results() + " partition 0"; !strings.Contains(readyz.err, want) {
		t.Errorf("/readyz error %q does not name %q", readyz.err, want)
	}

	mu.Lock()
	holding = false
	mu.Unlock()
	close(release)
	if !poll.Wait(30*time.Second, func() bool {
		readyz = getReadyz(t, srv.URL)
		return readyz.status == http.StatusOK
	}) {
		t.Fatalf("/readyz still %d (%s) 30 s after the collector was released", readyz.status, readyz.err)
	}
}

// readyzAnswer is a GET /readyz answer.
type readyzAnswer struct {
	status int
	err    string
}

func getReadyz(t *testing.T, url string) readyzAnswer {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return readyzAnswer{resp.StatusCode, body["error"]}
}
