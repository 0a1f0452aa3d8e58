// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/topology"
)

// secGateway is a gateway with a collector on an in-process kfake cluster,
// its spans and its log.
type secGateway struct {
	g       *gateway.Gateway
	client  *producer.Client
	cluster *kfake.Cluster
	spans   *tracetest.SpanRecorder
	log     logLines
}

// logLines collects what a logger writes, one entry per write.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default: // full: the tests log a few lines
	}
	return len(p), nil
}

// String returns the lines written so far.
func (l logLines) String() string {
	var all []string
	for {
		select {
		case line := <-l:
			all = append(all, line)
		default:
			return strings.Join(all, "")
		}
	}
}

// newSecGateway starts it. Nothing answers the requests.
func newSecGateway(tb testing.TB, cfg gateway.Config, opts ...gateway.Option) *secGateway {
	tb.Helper()
	return newSecGatewayWith(tb, cfg, nil, opts...)
}

// newSecGatewayWith is newSecGateway with more options for the publisher's
// Kafka client.
func newSecGatewayWith(tb testing.TB, cfg gateway.Config, pubOpts []kgo.Opt, opts ...gateway.Option) *secGateway {
	tb.Helper()
	topics := messages.DefaultTopics()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics.All()...))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cluster.Close)
	seeds := []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithPropagator(propagation.TraceContext{}))
	pub, err := kgo.NewClient(append(append(seeds, kgo.WithHooks(tracer)), pubOpts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	col, err := results.NewCollector(ctx, seeds, tracer, topology.Default(topics))
	if err != nil {
		tb.Fatal(err)
	}
	client := producer.NewClient(ctx, producer.NewPublisher(pub, topics.Requests), col, producer.WithTracerProvider(tp))
	tb.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_ = client.Close(cctx)
	})
	log := make(logLines, 1000)
	opts = append([]gateway.Option{gateway.WithTracerProvider(tp), gateway.WithMeterProvider(noop.NewMeterProvider()),
		gateway.WithLogger(slog.New(slog.NewTextHandler(log, nil)))}, opts...)
	g, err := gateway.New(cfg, client, func(context.Context) error { return nil }, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return &secGateway{g: g, client: client, cluster: cluster, spans: rec, log: log}
}

// dropProduce makes the cluster never answer Produce requests.
func dropProduce(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true
	})
}

func checkSecurityHeaders(t testing.TB, h http.Header) {
	t.Helper()
	if h.Get("Content-Type") != "application/json" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v: want application/json, nosniff, no-store", h)
	}
}

// Security #8: with a broker that never acknowledges, both API endpoints
// answer by --timeout plus a small margin, with 504.
func TestGatewayAnswersByTimeoutWhenKafkaDoesNotAcknowledge(t *testing.T) {
	const timeout = 500 * time.Millisecond
	sg := newSecGateway(t, gateway.Config{Timeout: timeout})
	dropProduce(sg.cluster)
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	for i, path := range []string{"/v1/search", "/v1/requests"} {
		start := time.Now()
		client := &http.Client{Timeout: timeout + 2*time.Second}
		resp, err := client.Post(srv.URL+path, "application/json", strings.NewReader(fmt.Sprintf(`{"query":"gzip","request_id":"noack-%d"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if took := time.Since(start); took > timeout+2*time.Second || resp.StatusCode != http.StatusGatewayTimeout {
			t.Errorf("%s: status %d after %s (timeout %s): %s", path, resp.StatusCode, took, timeout, body)
		}
	}
}

// Security #8: when publishing fails, the caller's request_id is in neither
// the log, the span status nor the 503 answer; only its hash is.
func TestGatewayPublishFailureDoesNotEchoTheRequestID(t *testing.T) {
	const id = "secret-caller-id-42"
	// Batches of at most 1 KiB: a 4 KB query fails to publish at once.
	sg := newSecGatewayWith(t, gateway.Config{Timeout: 5 * time.Second}, []kgo.Opt{kgo.ProducerBatchMaxBytes(1024)})
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/requests", "application/json", strings.NewReader(`{"query":"`+strings.Repeat("gzip ", 800)+`","request_id":"`+id+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "publish_failed") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), id) {
		t.Errorf("answer echoes the request id: %s", body)
	}
	if strings.Contains(sg.log.String(), id) {
		t.Errorf("log has the request id: %s", sg.log.String())
	}
	for _, s := range sg.spans.Ended() {
		if strings.Contains(s.Status().Description, id) {
			t.Errorf("span %s status has the request id: %s", s.Name(), s.Status().Description)
		}
		for _, e := range s.Events() {
			for _, a := range e.Attributes {
				if strings.Contains(a.Value.String(), id) {
					t.Errorf("span %s event %s has the request id", s.Name(), e.Name)
				}
			}
		}
	}
}

// Security #8: JSON answers are nosniff and no-store, and an echoed
// request_id is JSON-escaped, markup included.
func TestGatewayJSONAnswersAreSafe(t *testing.T) {
	sg := newSecGateway(t, gateway.Config{Timeout: 10 * time.Second})
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	const id = `a"</script><img src=x>`
	body, _ := json.Marshal(map[string]string{"query": "gzip", "request_id": id})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/requests", string(body)},
		{"POST", "/v1/search", `{"query":`},
		{"GET", "/healthz", ""},
		{"GET", "/readyz", ""},
	} {
		send := http.Get
		if c.method == http.MethodPost {
			send = func(url string) (*http.Response, error) {
				return http.Post(url, "application/json", strings.NewReader(c.body))
			}
		}
		resp, err := send(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkSecurityHeaders(t, resp.Header)
		if strings.ContainsAny(string(raw), "<>") {
			t.Errorf("%s %s: markup not escaped: %s", c.method, c.path, raw)
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %v: %s", c.method, c.path, err, raw)
		}
		if c.body == string(body) && (resp.StatusCode != http.StatusAccepted || v["request_id"] != id) {
			t.Errorf("status %d request_id %q", resp.StatusCode, v["request_id"])
		}
	}
}

// Security #8: a request with both Content-Length and Transfer-Encoding is
// answered 400 and its connection closed.
func TestGatewayRefusesContentLengthWithTransferEncoding(t *testing.T) {
	addr := serveLimited(t, gateway.Config{})
	c := dial(t, addr)
	body := `{"query":"gzip"}`
	fmt.Fprintf(c, "POST /v1/search HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), len(body), body)
	_, resp := closedWithin(t, c, 5*time.Second)
	if !strings.HasPrefix(resp, "HTTP/1.1 400 ") || !strings.Contains(resp, "Connection: close") || !strings.Contains(resp, `"bad_framing"`) {
		t.Fatalf("answer %q", resp)
	}
}
