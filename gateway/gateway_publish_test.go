// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// dropInitProducerID makes the cluster never answer InitProducerID: the
// publisher's records stay buffered, none sent, and it returns how many such
// requests arrived.
func dropInitProducerID(c *kfake.Cluster) *atomic.Int64 {
	var seen atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		seen.Add(1)
		return nil, nil, true
	})
	return &seen
}

// answer is one caller's answer and how long it took.
type answer struct {
	status int
	code   string
	msg    string
	took   time.Duration
}

func postSearch(t *testing.T, url, id string, clientTimeout time.Duration) answer {
	t.Helper()
	start := time.Now()
	client := &http.Client{Timeout: clientTimeout}
	resp, err := client.Post(url+"/v1/search", "application/json", strings.NewReader(fmt.Sprintf(`{"query":"gzip","request_id":%q}`, id)))
	if err != nil {
		t.Errorf("%s: %v", id, err)
		return answer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	return answer{resp.StatusCode, body.Error.Code, body.Error.Message, time.Since(start)}
}

// Issue 25 #1: a caller whose record was buffered behind another's does
// not inherit that caller's deadline. While the broker stalls, the first
// caller's deadline passes first (it came through a gateway with a shorter
// timeout, on the same request client); franz-go fails every record
// buffered behind a record whose context ends. The callers behind must not
// be told 504 "no result within the timeout" before their own timeout, for
// a request that was never published: each gets 503 publish_failed (not
// published, retry) or, at its own deadline, a 504 that says the request
// was not acknowledged.
func TestGatewayRequestsDoNotInheritAnotherDeadline(t *testing.T) {
	const short, timeout = 300 * time.Millisecond, 1500 * time.Millisecond
	sg := newSecGateway(t, gateway.Config{Timeout: timeout})
	first, err := gateway.New(gateway.Config{Timeout: short}, sg.client, func(context.Context) error { return nil },
		gateway.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	seen := dropInitProducerID(sg.cluster)
	srv, firstSrv := httptest.NewServer(sg.g), httptest.NewServer(first)
	defer srv.Close()
	defer firstSrv.Close()

	firstAnswer := make(chan answer, 1)
	go func() { firstAnswer <- postSearch(t, firstSrv.URL, "first", timeout+5*time.Second) }()
	if !poll.Wait(5*time.Second, func() bool { return seen.Load() > 0 }) {
		t.Fatal("the publisher never asked for a producer id")
	}
	var wg sync.WaitGroup
	later := make([]answer, 4)
	for i := range later {
		wg.Go(func() { later[i] = postSearch(t, srv.URL, fmt.Sprintf("later-%d", i), timeout+5*time.Second) })
	}
	wg.Wait()
	t.Logf("first: %+v", <-firstAnswer)
	for i, a := range later {
		t.Logf("later-%d: %+v", i, a)
		// The publisher here has no record delivery timeout: nothing but a
		// caller's own deadline may end its call.
		ok := a.status == http.StatusServiceUnavailable && a.code == "publish_failed" ||
			a.status == http.StatusGatewayTimeout && strings.Contains(a.msg, "not acknowledged")
		if !ok || a.took < timeout-50*time.Millisecond {
			t.Errorf("later-%d: %d %s after %s (timeout %s): %q; want 503 publish_failed, or 504 \"not acknowledged\", at its own timeout",
				i, a.status, a.code, a.took.Round(time.Millisecond), timeout, a.msg)
		}
	}
}

// silentBroker listens on 127.0.0.1, accepts connections and never answers
// on them: a broker that does not answer. It returns its address.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// kafkaReady is the readiness check of pipeline.Pipeline.Ready against the
// brokers at addr: a new client per check, listing the topics.
func kafkaReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			return err
		}
		defer client.Close()
		_, err = kadm.NewClient(client).ListTopics(ctx, "retrieval.requests")
		return err
	}
}

// Issue 25 #2: /readyz answers within its bound while the broker does not
// answer (a listener that accepts and never replies), 503.
func TestGatewayReadyzIsBoundedWhenTheBrokerDoesNotAnswer(t *testing.T) {
	g, err := gateway.New(gateway.Config{}, nil, kafkaReady(silentBroker(t)), gateway.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	client := &http.Client{Timeout: 15 * time.Second}
	for i := range 2 { // the second finds the first's check still running
		start := time.Now()
		resp, err := client.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		t.Logf("probe %d: %d after %s: %s", i, resp.StatusCode, took.Round(time.Millisecond), body)
		if resp.StatusCode != http.StatusServiceUnavailable || took > 5*time.Second {
			t.Errorf("probe %d: %d after %s; want 503 within its 2 s bound (5 s with slack)", i, resp.StatusCode, took.Round(time.Millisecond))
		}
	}
}

// refuseProduce makes the cluster answer every Produce with a
// non-retriable error: a broker refusing writes.
func refuseProduce(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.PolicyViolation.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// Issue 25 #2: while the broker refuses writes, searches fail 503
// publish_failed and /readyz says not ready (503, with the reason), though
// Kafka answers metadata requests.
func TestGatewayNotReadyWhilePublishesFail(t *testing.T) {
	sg := newSecGateway(t, gateway.Config{Timeout: 5 * time.Second})
	refuseProduce(sg.cluster)
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	if a := postSearch(t, srv.URL, "refused", 10*time.Second); a.status != http.StatusServiceUnavailable || a.code != "publish_failed" {
		t.Fatalf("search: %+v; want 503 publish_failed", a)
	}
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("readyz: %d %s", resp.StatusCode, body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "publish") {
		t.Errorf("readyz: %d %s; want 503 naming the failed publishes", resp.StatusCode, body)
	}
}
