// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kretrieve/kretrieve/gateway"
)

// serveLimited serves a gateway without a Kafka client (health, readiness
// and request decoding only) with Gateway.Serve, the server of the gateway
// and run --serve commands, on 127.0.0.1. It returns the address.
func serveLimited(t *testing.T, cfg gateway.Config) string {
	t.Helper()
	g, err := gateway.New(cfg, nil, func(context.Context) error { return nil }, gateway.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dial opens a raw connection that the test closes.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedWithin reads from c until it is closed (EOF or reset), at most
// limit, and returns how long that took and what was read.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) (time.Duration, string) {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s (read %q)", limit, b)
	}
	return time.Since(start), string(b)
}

func TestGatewayCutsOffATrickledBody(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	addr := serveLimited(t, gateway.Config{ReadTimeout: readTimeout})
	c := dial(t, addr)
	start := time.Now()
	fmt.Fprintf(c, "POST /v1/search HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte a second, until the server closes
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_, got := closedWithin(t, c, readTimeout+2*time.Second)
	took := time.Since(start)
	if took < readTimeout || took > readTimeout+time.Second {
		t.Errorf("connection closed after %s, want the read timeout %s (+1 s)", took, readTimeout)
	}
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, `{"error":{"code":"request_timeout"`) {
		t.Errorf("answer %q: want 408 with the JSON error", got)
	}
}

func TestGatewayClosesIdleConnections(t *testing.T) {
	const idle = 300 * time.Millisecond
	addr := serveLimited(t, gateway.Config{IdleTimeout: idle})
	c := dial(t, addr)
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("status %d, close %v: want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	took, _ := closedWithin(t, c, idle+2*time.Second)
	if took < idle/2 || took > idle+time.Second {
		t.Errorf("idle connection closed after %s, want the idle timeout %s", took, idle)
	}
}

// stall opens n connections that send part of a request's headers and
// stop, as a slowloris client does.
func stall(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		if _, err := fmt.Fprintf(conns[i], "POST /v1/search HTTP/1.1\r\nHost: test\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

// healthz times one request on a new connection.
func healthz(t *testing.T, addr string) time.Duration {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	return time.Since(start)
}

func TestGatewayServesNormalRequestsDuringASlowloris(t *testing.T) {
	const (
		stalled       = 200
		headerTimeout = 500 * time.Millisecond
	)
	addr := serveLimited(t, gateway.Config{ReadHeaderTimeout: headerTimeout, MaxConnections: stalled + 10})
	conns := stall(t, addr, stalled)
	start := time.Now()
	if took := healthz(t, addr); took > time.Second {
		t.Errorf("a normal request took %s with %d stalled connections, want < 1 s", took, stalled)
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { closedWithin(t, c, headerTimeout+2*time.Second) })
	}
	wg.Wait()
	if took := time.Since(start); took > headerTimeout+time.Second {
		t.Errorf("stalled connections closed after %s, want the header timeout %s", took, headerTimeout)
	}
}

func TestGatewayConnectionsBeyondTheLimitWait(t *testing.T) {
	const (
		limit         = 20
		stalled       = 60
		headerTimeout = 300 * time.Millisecond
	)
	addr := serveLimited(t, gateway.Config{ReadHeaderTimeout: headerTimeout, MaxConnections: limit})
	stall(t, addr, stalled)
	// The stalled connections hold every slot; the next ones wait in the
	// accept queue behind them, and each round of limit connections is
	// closed after the header timeout.
	took := healthz(t, addr)
	rounds := time.Duration((stalled + limit - 1) / limit)
	if took < (rounds-1)*headerTimeout || took > rounds*headerTimeout+time.Second {
		t.Errorf("a request behind %d stalled connections (limit %d) took %s, want %s to %s",
			stalled, limit, took, (rounds-1)*headerTimeout, rounds*headerTimeout+time.Second)
	}
}

// TestGatewayRefusesHeadersBeyondMaxHeaderBytes sends headers just over
// MaxHeaderBytes, which get the gateway's JSON 431, and headers far beyond
// it, which net/http cuts off with its own 431 without reading them all.
func TestGatewayRefusesHeadersBeyondMaxHeaderBytes(t *testing.T) {
	const limit = 4 << 10
	addr := serveLimited(t, gateway.Config{MaxHeaderBytes: limit})

	c := dial(t, addr)
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: test\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", limit))
	_, got := closedWithin(t, c, 5*time.Second)
	status, body, _ := strings.Cut(got, "\r\n\r\n")
	if !strings.HasPrefix(status, "HTTP/1.1 431 ") || !strings.Contains(status, "Content-Type: application/json") {
		t.Fatalf("answer to %d bytes of headers %q: want 431 in JSON", limit, status)
	}
	var e struct {
		Error gateway.APIError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != "headers_too_large" {
		t.Errorf("body %q (%v): want the JSON error headers_too_large", body, err)
	}

	c = dial(t, addr)
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: test\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 4*limit))
	if _, got := closedWithin(t, c, 5*time.Second); !strings.HasPrefix(got, "HTTP/1.1 431 ") {
		t.Errorf("answer to %d bytes of headers %q: want net/http's 431", 4*limit, got)
	}
}
