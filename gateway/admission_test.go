// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/otelnames"
)

// peak tracks a level and the highest it reached.
type peak struct{ cur, max atomic.Int64 }

func (p *peak) add(n int64) {
	v := p.cur.Add(n)
	p.raise(v)
}

func (p *peak) set(v int64) {
	p.cur.Store(v)
	p.raise(v)
}

func (p *peak) raise(v int64) {
	for m := p.max.Load(); v > m && !p.max.CompareAndSwap(m, v); m = p.max.Load() {
	}
}

// TestAdmissionUnderThreeTimesCapacity offers 3× MaxInFlight concurrent
// clients for a bounded time to a handler that holds each request and its
// body: the requests in the handler never exceed the bound, every admitted
// one completes 200, every refused one gets 503, Retry-After and the JSON
// error, its status written within 50 ms of reaching the gateway, and the
// bodies held stay under MaxInFlight × MaxBodyBytes. What the clients see
// is logged, and bounded only loosely: on a shared 2-core machine it
// measures the scheduler as much as the gateway.
func TestAdmissionUnderThreeTimesCapacity(t *testing.T) {
	const (
		maxInFlight = 16
		clients     = 3 * maxInFlight
		hold        = 20 * time.Millisecond
		offered     = time.Second
		bodyBytes   = 8 << 10
		// Every refusal's status written within 50 ms (150 ms under -race)
		// of reaching the gateway, and seen by its client within 1 s.
		maxRefusal       = raceSlowdown * 50 * time.Millisecond
		maxClientRefusal = time.Second
	)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	a, err := newAdmission(maxInFlight, mp)
	if err != nil {
		t.Fatal(err)
	}
	var inHandler, held peak
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler.add(1)
		defer inHandler.add(-1)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, DefaultMaxBodyBytes))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{APIError{Code: "bad_body", Message: err.Error()}})
			return
		}
		held.add(int64(cap(body)))
		defer held.add(-int64(cap(body)))
		time.Sleep(hold)
		writeJSON(w, http.StatusOK, map[string]int{"bytes": len(body)})
	})
	var (
		statusMu sync.Mutex
		toStatus []time.Duration // of each refusal, in the server
	)
	admitted := a.wrap("POST /v1/search", stub)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, start: time.Now()}
		admitted.ServeHTTP(sw, r)
		if sw.status == http.StatusServiceUnavailable {
			statusMu.Lock()
			toStatus = append(toStatus, sw.took)
			statusMu.Unlock()
		}
	}))
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()

	var baseline runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&baseline)
	var heapPeak peak
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the heap in use, every 50 ms of the burst
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapPeak.set(int64(m.HeapInuse))
			}
		}
	}()

	var (
		mu                  sync.Mutex
		completed, refusals []time.Duration
		failures            []string
		wg                  sync.WaitGroup
	)
	payload := bytes.Repeat([]byte("x"), bodyBytes)
	deadline := time.Now().Add(offered)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				start := time.Now()
				status, header, body, err := postOnce(client, srv.URL, payload)
				took := time.Since(start)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case status == http.StatusOK:
					completed = append(completed, took)
				case status == http.StatusServiceUnavailable:
					refusals = append(refusals, took)
					var e errorBody
					if jerr := json.Unmarshal(body, &e); jerr != nil || e.Error.Code != "overloaded" || e.Error.Message == "" ||
						header.Get("Retry-After") != "1" || header.Get("Content-Type") != "application/json" {
						failures = append(failures, "refusal: "+header.Get("Retry-After")+" "+string(body))
					}
					if took > maxClientRefusal {
						failures = append(failures, "refusal seen by the client after "+took.String())
					}
				default:
					failures = append(failures, http.StatusText(status)+": "+string(body))
				}
				mu.Unlock()
				if status == http.StatusServiceUnavailable {
					time.Sleep(5 * time.Millisecond) // an impatient client: retries long before Retry-After
				}
			}
		})
	}
	wg.Wait()
	close(stopSampling)
	<-sampled

	if len(failures) > 0 {
		t.Errorf("%d failures, the first: %s", len(failures), failures[0])
	}
	if got := inHandler.max.Load(); got > maxInFlight {
		t.Errorf("%d requests in the handler at once, bound %d", got, maxInFlight)
	}
	if got, bound := held.max.Load(), int64(maxInFlight*DefaultMaxBodyBytes); got > bound {
		t.Errorf("bodies held peaked at %d bytes, bound MaxInFlight × MaxBodyBytes = %d", got, bound)
	}
	if len(completed) == 0 || len(refusals) == 0 {
		t.Fatalf("%d admitted, %d refused: the load did not reach the bound", len(completed), len(refusals))
	}
	if len(toStatus) != len(refusals) {
		t.Errorf("the server refused %d, the clients saw %d refusals", len(toStatus), len(refusals))
	}
	if slowest := quantile(toStatus, 1); slowest > maxRefusal {
		t.Errorf("a refusal's status written %s after it reached the gateway, bound %s", slowest, maxRefusal)
	}
	// Generous: the heap of the test binary besides; what matters is
	// that 3× the clients do not hold 3× the bodies.
	if grew, bound := heapPeak.max.Load()-int64(baseline.HeapInuse), int64(64<<20); grew > bound {
		t.Errorf("heap in use grew by %d bytes during the burst, bound %d", grew, bound)
	}
	if n := refusedCount(t, reader); n != int64(len(refusals)) {
		t.Errorf("%s = %d, want %d", otelnames.MetricGatewayRefused, n, len(refusals))
	}
	t.Logf("%d clients for %s, bound %d, hold %s: %d admitted (client p50 %s, p99 %s), %d refused (server to status p99 %s, max %s; client p50 %s, p99 %s, max %s); in handler at most %d; bodies held at most %d KiB; heap in use grew at most %d KiB",
		clients, offered, maxInFlight, hold, len(completed), quantile(completed, 0.5), quantile(completed, 0.99),
		len(refusals), quantile(toStatus, 0.99), quantile(toStatus, 1), quantile(refusals, 0.5), quantile(refusals, 0.99), quantile(refusals, 1),
		inHandler.max.Load(), held.max.Load()>>10, (heapPeak.max.Load()-int64(baseline.HeapInuse))>>10)
}

// statusWriter records the status and how long after start it was written.
type statusWriter struct {
	http.ResponseWriter
	start  time.Time
	status int
	took   time.Duration
}

func (w *statusWriter) WriteHeader(status int) {
	w.status, w.took = status, time.Since(w.start)
	w.ResponseWriter.WriteHeader(status)
}

func postOnce(client *http.Client, url string, payload []byte) (int, http.Header, []byte, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(payload))
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func refusedCount(t *testing.T, reader *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == otelnames.MetricGatewayRefused {
				for _, dp := range sum.DataPoints {
					if route, _ := dp.Attributes.Value("http.route"); route.AsString() != "POST /v1/search" {
						t.Errorf("refusal counted on route %q", route.AsString())
					}
					n += dp.Value
				}
			}
		}
	}
	return n
}

func TestLimitListenerBoundsOpenConnections(t *testing.T) {
	const limit, dials = 3, 10
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(inner, limit)
	defer ln.Close()
	var open peak
	accepted := make(chan struct{}, dials)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open.add(1)
			accepted <- struct{}{}
			go func() { // holds its slot a while, as a stalled client
				time.Sleep(20 * time.Millisecond)
				open.add(-1)
				_ = c.Close()
			}()
		}
	}()
	for range dials {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for i := range dials {
		select {
		case <-accepted:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d connections accepted", i, dials)
		}
	}
	if got := open.max.Load(); got > limit {
		t.Errorf("%d connections open at once, limit %d", got, limit)
	}

	// Close unblocks an Accept waiting for a slot.
	inner2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln2 := limitListener(inner2, 1)
	held, err := net.Dial("tcp", inner2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := ln2.Accept(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ln2.Accept(); done <- err }()
	_ = ln2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waiting after Close")
	}
}

// A refusal starts no span and reads no body: refusals under overload are
// not a storm of server-error spans.
func TestGatewayRefusalStartsNoSpan(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	reader := sdkmetric.NewManualReader()
	g, err := New(Config{MaxInFlight: 1}, nil, func(context.Context) error { return nil },
		WithTracerProvider(tp), WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	g.admit.inFlight.Store(1) // the one slot is taken
	body := &countingReader{r: strings.NewReader(`{"query":"q"}`)}
	w := httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/search", body))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if n := len(spans.Ended()) + len(spans.Started()); n != 0 {
		t.Errorf("a refusal recorded %d spans", n)
	}
	if body.n != 0 {
		t.Errorf("a refusal read %d bytes of the body", body.n)
	}
	if n := refusedCount(t, reader); n != 1 {
		t.Errorf("%s = %d, want 1", otelnames.MetricGatewayRefused, n)
	}
	if g.admit.inFlight.Load() != 1 {
		t.Errorf("in flight %d after a refusal, want 1", g.admit.inFlight.Load())
	}
	// healthz is not admission-controlled: probes answer under overload.
	w = httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusOK {
		t.Errorf("healthz under overload: %d", w.Code)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
