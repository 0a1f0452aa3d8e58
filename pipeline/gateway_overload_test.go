// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// gatedSearcher holds every search until its gate opens.
type gatedSearcher struct {
	*search.Index
	gate chan struct{}
}

func (s gatedSearcher) Search(ctx context.Context, query string, k int) ([]search.Hit, error) {
	select {
	case <-s.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Index.Search(ctx, query, k)
}

// TestGatewayOverThePipelineRefusesBeyondMaxInFlight offers 3× MaxInFlight
// concurrent searches to the gateway of the gateway command while the
// retrieval worker holds every search: MaxInFlight are admitted and complete
// 200 once the searches go on; the others are refused at once with 503,
// Retry-After and the JSON error, and never reach Kafka.
func TestGatewayOverThePipelineRefusesBeyondMaxInFlight(t *testing.T) {
	const (
		maxInFlight = 8
		offered     = 3 * maxInFlight
		// Loose: what a client sees on a shared 2-core machine measures the
		// scheduler as much as the gateway; producer's
		// TestAdmissionUnderThreeTimesCapacity bounds the gateway's own time
		// to the status at 50 ms.
		maxRefusal = time.Second
	)
	h := newHarness(t, 4)
	h.cfg.SearchTimeout = -1 // the gate holds searches as long as the refusals take
	gate := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		workers.Wait()
	})
	retrieval, err := h.pipeline().NewWorker(messages.StageRetrieval, gatedSearcher{h.idx, gate})
	if err != nil {
		t.Fatal(err)
	}
	enrichment, err := h.pipeline().NewWorker(messages.StageEnrichment, h.idx)
	if err != nil {
		t.Fatal(err)
	}
	workers.Go(func() { _ = retrieval.Run(ctx) })
	workers.Go(func() { _ = enrichment.Run(ctx) })

	g, client, err := h.pipeline().NewGateway(t.Context(), gateway.Config{MaxInFlight: maxInFlight})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	type answer struct {
		status     int
		retryAfter string
		body       string
		took       time.Duration
	}
	answers := make(chan answer, offered)
	hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: offered}}
	defer hc.CloseIdleConnections()
	for range offered {
		go func() {
			start := time.Now()
			resp, err := hc.Post("http://"+ln.Addr().String()+"/v1/search", "application/json", strings.NewReader(`{"query":"http server"}`))
			if err != nil {
				answers <- answer{body: err.Error(), took: time.Since(start)}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b), time.Since(start)}
		}()
	}
	var ok, refused int
	var slowest time.Duration
	for i := range offered {
		if i == offered-maxInFlight {
			close(gate) // every refusal is in: let the admitted searches go on
		}
		select {
		case a := <-answers:
			switch {
			case a.status == http.StatusOK && i >= offered-maxInFlight:
				ok++
			case a.status == http.StatusServiceUnavailable && a.retryAfter == "1" && strings.HasPrefix(a.body, `{"error":{"code":"overloaded"`):
				refused++
				slowest = max(slowest, a.took)
				if a.took > maxRefusal {
					t.Errorf("refusal took %s", a.took)
				}
			default:
				t.Errorf("answer %d: %d %q (Retry-After %q) after %s", i, a.status, a.body, a.retryAfter, a.took)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d answers", i, offered)
		}
	}
	if ok != maxInFlight || refused != offered-maxInFlight {
		t.Errorf("%d completed, %d refused; want %d and %d", ok, refused, maxInFlight, offered-maxInFlight)
	}
	t.Logf("%d offered, bound %d: %d completed, %d refused, the slowest refusal in %s", offered, maxInFlight, ok, refused, slowest)
}
