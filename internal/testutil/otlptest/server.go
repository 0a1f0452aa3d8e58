// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

const (
	tracesPath      = "/v1/traces"
	metricsPath     = "/v1/metrics"
	logsPath        = "/v1/logs"
	contentTypeHTTP = "application/x-protobuf"
	maxBodyBytes    = 64 << 20
)

// Server is an in-process OTLP/HTTP collector. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu          sync.Mutex
	spans       []Span
	bodies      [][]byte
	metricNames []string
	metricReqs  []*colmetricpb.ExportMetricsServiceRequest // decoded, accepted ones
	logs        []LogRecord
	requests    int
	status      int
	hold        chan struct{} // non-nil while requests are held
	closed      chan struct{}
}

// NewServer starts a Server on 127.0.0.1 with a random port. It is closed by
// t.Cleanup; requests held with [Server.Hold] are released first.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{closed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(tracesPath, s.handleTraces)
	mux.HandleFunc(metricsPath, s.handleMetrics)
	mux.HandleFunc(logsPath, s.handleLogs)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.close)
	return s
}

// Endpoint returns the base URL ("http://127.0.0.1:PORT"), suitable for
// OTEL_EXPORTER_OTLP_ENDPOINT; exporters append /v1/traces, /v1/metrics
// and /v1/logs.
func (s *Server) Endpoint() string { return s.srv.URL }

// Spans returns a snapshot of every span received so far, in arrival order.
func (s *Server) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spans)
}

// RawBodies returns a snapshot of every request body received on
// /v1/traces, /v1/metrics and /v1/logs (gzip already decoded), in arrival order,
// including requests answered with a failure status. Use it to check that
// some value (a canary) never reaches the telemetry backend.
func (s *Server) RawBodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.bodies))
	for i, b := range s.bodies {
		out[i] = slices.Clone(b)
	}
	return out
}

// MetricNames returns the sorted, de-duplicated names of the metrics
// received so far.
func (s *Server) MetricNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.metricNames)
}

// Requests returns how many export requests (traces, metrics and logs, accepted
// or failed) the server has received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// SetStatus makes the server answer every following request with the given
// HTTP status code and discard its payload (the raw body is still kept).
// SetStatus(0) or SetStatus(http.StatusOK) restores normal operation.
func (s *Server) SetStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = code
}

// Hold makes every following request block before it is processed, until
// the returned release function is called (or the server is closed). Use
// it to simulate a slow backend. release is idempotent.
func (s *Server) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.hold = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.hold == ch {
				s.hold = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// WaitForSpans polls until at least n spans have been received and returns
// them; it fails tb if that does not happen within timeout.
func (s *Server) WaitForSpans(tb testing.TB, n int, timeout time.Duration) []Span {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans := s.Spans()
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			tb.Fatalf("otlptest: got %d spans, want at least %d within %v", len(spans), n, timeout)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) close() {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.Close()
}

func (s *Server) handleTraces(w http.ResponseWriter, r *http.Request) {
	var req coltracepb.ExportTraceServiceRequest
	if !s.decode(w, r, &req, "trace") {
		return
	}
	spans := flatten(req.GetResourceSpans())
	s.mu.Lock()
	s.spans = append(s.spans, spans...)
	s.mu.Unlock()
	writeProto(w, &coltracepb.ExportTraceServiceResponse{})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var req colmetricpb.ExportMetricsServiceRequest
	if !s.decode(w, r, &req, "metrics") {
		return
	}
	s.mu.Lock()
	s.keepMetrics(&req)
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if i, found := slices.BinarySearch(s.metricNames, m.GetName()); !found {
					s.metricNames = slices.Insert(s.metricNames, i, m.GetName())
				}
			}
		}
	}
	s.mu.Unlock()
	writeProto(w, &colmetricpb.ExportMetricsServiceResponse{})
}

// LogRecord is one log record received on /v1/logs.
type LogRecord struct {
	// Body is the record's body as a string (the slog message).
	Body string
	// Severity is the severity text ("INFO", "WARN", ...).
	Severity string
	// TraceID and SpanID are hex, empty when the record has none.
	TraceID, SpanID string
	// Attributes are the record's attributes.
	Attributes map[string]any
}

// Logs returns a snapshot of every log record received so far, in arrival
// order.
func (s *Server) Logs() []LogRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logs)
}

func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	var req collogspb.ExportLogsServiceRequest
	if !s.decode(w, r, &req, "logs") {
		return
	}
	var recs []LogRecord
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				rec := LogRecord{
					Body:       lr.GetBody().GetStringValue(),
					Severity:   lr.GetSeverityText(),
					Attributes: attrMap(lr.GetAttributes()),
				}
				if id := lr.GetTraceId(); len(id) > 0 {
					rec.TraceID = hex.EncodeToString(id)
				}
				if id := lr.GetSpanId(); len(id) > 0 {
					rec.SpanID = hex.EncodeToString(id)
				}
				recs = append(recs, rec)
			}
		}
	}
	s.mu.Lock()
	s.logs = append(s.logs, recs...)
	s.mu.Unlock()
	writeProto(w, &collogspb.ExportLogsServiceResponse{})
}

// decode receives one export request into req, writing the error response
// itself; it reports false when the request must not be kept.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, req proto.Message, what string) bool {
	body, ok := s.receive(w, r)
	if !ok {
		return false
	}
	if err := proto.Unmarshal(body, req); err != nil {
		http.Error(w, fmt.Sprintf("decode %s request: %v", what, err), http.StatusBadRequest)
		return false
	}
	return true
}

// receive validates and reads one export request, applying Hold and
// SetStatus. It writes the error response itself and reports false when the
// request must not be decoded.
func (s *Server) receive(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return nil, false
	}
	if ct := r.Header.Get("Content-Type"); ct != contentTypeHTTP {
		http.Error(w, fmt.Sprintf("unsupported content type %q", ct), http.StatusUnsupportedMediaType)
		return nil, false
	}

	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-s.closed:
		case <-r.Context().Done():
			return nil, false
		}
	}

	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}

	s.mu.Lock()
	s.requests++
	s.bodies = append(s.bodies, body)
	status := s.status
	s.mu.Unlock()

	if status != 0 && status != http.StatusOK {
		http.Error(w, "otlptest: configured failure", status)
		return nil, false
	}
	return body, true
}

func readBody(r *http.Request) ([]byte, error) {
	var src io.Reader = http.MaxBytesReader(nil, r.Body, maxBodyBytes)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("open gzip body: %w", err)
		}
		defer zr.Close()
		src = io.LimitReader(zr, maxBodyBytes)
	default:
		return nil, fmt.Errorf("unsupported content encoding %q", enc)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(src); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return buf.Bytes(), nil
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentTypeHTTP)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
