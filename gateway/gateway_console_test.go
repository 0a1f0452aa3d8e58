// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/topology"
)

// serveWithConsole serves g, with the console of cfg mounted as run --serve
// mounts it, with Gateway.Serve on 127.0.0.1, and returns its address.
func serveWithConsole(t *testing.T, g *gateway.Gateway, cfg console.Config, opts ...console.Option) string {
	t.Helper()
	con, err := console.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	g.Handle(console.Prefix, con)
	g.HandleAdmitted("POST "+console.Prefix+"api/search", con)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		con.Close() // ends the streams, so that Serve drains
		cancel()
		<-done
	})
	return ln.Addr().String()
}

// Issue 25 #9 (F4): console event streams do not take every connection
// slot: with --max-connections streams open, /healthz still answers.
func TestConsoleStreamsLeaveConnectionsForTheAPI(t *testing.T) {
	const maxConns = 4
	sg := newSecGateway(t, gateway.Config{MaxConnections: maxConns})
	addr := serveWithConsole(t, sg.g, console.Config{Topology: topology.Default(messages.DefaultTopics()),
		KafkaOptions: []kgo.Opt{kgo.SeedBrokers(sg.cluster.ListenAddrs()...)}, MaxStreams: maxConns / 2})
	var streaming int
	for i := range maxConns {
		c := dial(t, addr)
		fmt.Fprintf(c, "GET /console/api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200 ") {
			streaming++
		}
	}
	client := &http.Client{Timeout: 3 * time.Second}
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/healthz")
	t.Logf("%d of %d connections streaming; /healthz: %v after %s", streaming, maxConns, err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("/healthz with %d streams open (max connections %d): %v", maxConns, maxConns, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}

// Issue 25 #10 (F5): console searches on run --serve count in
// --max-in-flight with the API's: with the API full, a console search is
// refused (503 overloaded) before it starts.
func TestConsoleSearchesCountInMaxInFlight(t *testing.T) {
	const maxInFlight = 2
	sg := newSecGateway(t, gateway.Config{MaxInFlight: maxInFlight, Timeout: 30 * time.Second})
	dropProduce(sg.cluster) // searches wait their timeout
	var started atomic.Int64
	addr := serveWithConsole(t, sg.g, console.Config{Topology: topology.Default(messages.DefaultTopics()),
		KafkaOptions: []kgo.Opt{kgo.SeedBrokers(sg.cluster.ListenAddrs()...)}},
		console.WithRequestClient(func(context.Context) (*producer.Client, error) {
			started.Add(1)
			return nil, errors.New("test: no request client")
		}))
	base := "http://" + addr
	// Searches that hold the API's slots until the test ends (before the
	// server drains). Nothing else is sent until both are in: a request
	// sent between them would take the second one's slot.
	hold, stopHolding := context.WithCancel(context.Background())
	defer stopHolding()
	for i := range maxInFlight {
		go func() {
			req, _ := http.NewRequestWithContext(hold, http.MethodPost, base+"/v1/search", strings.NewReader(fmt.Sprintf(`{"query":"gzip","request_id":"hold-%d"}`, i)))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	// Full once both searches were admitted and sent (the broker never
	// acknowledges them, so each waits its timeout in its slot).
	sent := func() int {
		n := 0
		for _, s := range sg.spans.Started() {
			if s.SpanKind() == trace.SpanKindProducer {
				n++
			}
		}
		return n
	}
	if !poll.Wait(20*time.Second, func() bool { return sent() >= maxInFlight }) {
		t.Fatalf("%d of the %d searches were sent", sent(), maxInFlight)
	}
	resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a search with %d searches in flight (--max-in-flight %d): %d; want 503", maxInFlight, maxInFlight, resp.StatusCode)
	}
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodPost, base+"/console/api/search", strings.NewReader(`{"query":"gzip"}`))
		req.Header.Set(console.CSRFHeader, "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"overloaded"`) {
			t.Errorf("console search %d with the API full: %d %s; want 503 overloaded", i, resp.StatusCode, body)
		}
	}
	t.Logf("console searches started with the API full: %d", started.Load())
	if n := started.Load(); n != 0 {
		t.Errorf("%d console searches started with --max-in-flight %d in flight", n, maxInFlight)
	}
}
