// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

// TestMain makes the tests hermetic (no OTEL_* variable of the caller's
// environment leaks in) and checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			_ = os.Unsetenv(k)
		}
	}
	goleak.VerifyTestMain(m)
}

// request is one request received by a collector.
type request struct {
	Method, Path string
	Header       http.Header
	Body         []byte // gzip already decoded
	ClientCN     string // common name of the TLS client certificate
}

// collector is an OTLP/HTTP endpoint on 127.0.0.1 that records requests
// and answers with respond (200 and an empty body by default).
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
	respond  func(n int, w http.ResponseWriter) // n counts requests from 1
}

func newCollector(t testing.TB) *collector {
	t.Helper()
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(c.handle))
	t.Cleanup(c.Close)
	return c
}

// newUnstartedCollector returns a collector the caller configures (TLS)
// and starts.
func newUnstartedCollector(t testing.TB) *collector {
	t.Helper()
	c := &collector{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(c.handle))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) handle(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: b}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		req.ClientCN = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	c.mu.Lock()
	c.requests = append(c.requests, req)
	n, respond := len(c.requests), c.respond
	c.mu.Unlock()
	if respond != nil {
		respond(n, w)
	}
}

func (c *collector) setRespond(f func(n int, w http.ResponseWriter)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.respond = f
}

func (c *collector) Requests() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.requests...)
}

// only returns the single request received.
func (c *collector) only(t testing.TB) request {
	t.Helper()
	reqs := c.Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

func decode(t testing.TB, body []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(body, &req))
	return &req
}
