// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// fastRetry retries quickly, so that backoff does not slow the tests.
var fastRetry = otlpwire.RetryConfig{Enabled: true, InitialInterval: 10 * time.Millisecond, MaxInterval: 20 * time.Millisecond}

// newExporter returns an exporter of cfg sending to url + "/v1/traces".
func newExporter(t *testing.T, url string, cfg otlpwire.Config) *otlpwire.Exporter {
	t.Helper()
	cfg.EndpointURL = url + "/v1/traces"
	exp, err := otlpwire.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

// failFirst answers the first n requests with status and headers, then 200.
func failFirst(n, status int, header map[string]string) func(int, http.ResponseWriter) {
	return func(i int, w http.ResponseWriter) {
		if i > n {
			return
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		http.Error(w, "try later", status)
	}
}

func TestRetry(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := newCollector(t)
			srv.setRespond(failFirst(2, status, nil))
			exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry})
			require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
			reqs := srv.Requests()
			require.Len(t, reqs, 3)
			assert.Equal(t, reqs[0].Body, reqs[2].Body, "the same body is sent again")
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		value    func() string
		wantWait time.Duration
	}{
		{name: "seconds", value: func() string { return "1" }, wantWait: time.Second},
		// HTTP dates have whole seconds: 2s from now is at least 1s away.
		{name: "HTTP date", value: func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, wantWait: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCollector(t)
			srv.setRespond(func(n int, w http.ResponseWriter) {
				if n == 1 {
					w.Header().Set("Retry-After", tc.value())
					w.WriteHeader(http.StatusServiceUnavailable)
				}
			})
			exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry})
			start := time.Now()
			require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
			assert.GreaterOrEqual(t, time.Since(start), tc.wantWait, "waited as asked, not the 10ms backoff")
			assert.Len(t, srv.Requests(), 2)
		})
	}
}

// A Retry-After beyond the export's deadline fails the export at once
// rather than sleeping until the deadline.
func TestRetryAfterBeyondTimeout(t *testing.T) {
	srv := newCollector(t)
	srv.setRespond(failFirst(1, http.StatusTooManyRequests, map[string]string{"Retry-After": "30"}))
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry, Timeout: 2 * time.Second})
	start := time.Now()
	err := exp.ExportSpans(t.Context(), stubSpans())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no time left to retry")
	assert.Contains(t, err.Error(), "429 Too Many Requests")
	assert.Less(t, time.Since(start), time.Second)
	assert.Len(t, srv.Requests(), 1)
}

// Retries stop at the export timeout.
func TestRetryBoundedByTimeout(t *testing.T) {
	srv := newCollector(t)
	srv.setRespond(failFirst(1000, http.StatusServiceUnavailable, nil))
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry, Timeout: 300 * time.Millisecond})
	start := time.Now()
	err := exp.ExportSpans(t.Context(), stubSpans())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503 Service Unavailable")
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Greater(t, len(srv.Requests()), 3)
}

// Connection errors are retried: the collector may be restarting.
func TestRetryConnectionRefused(t *testing.T) {
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	exp := newExporter(t, "http://"+addr, otlpwire.Config{Retry: fastRetry, Timeout: 2 * time.Second})
	refused := make(chan error, 1)
	otlpwire.OnDialError(exp, func(err error) {
		select {
		case refused <- err:
		default:
		}
	})
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(context.Background(), stubSpans()) }()

	// Bring the collector up at that address once an attempt was refused,
	// while the exporter retries.
	select {
	case err := <-refused:
		require.ErrorContains(t, err, "refused")
	case err := <-done:
		t.Fatalf("export ended before any connection was refused: %v", err)
	}
	srv := newUnstartedCollector(t)
	srv.Listener, err = (&net.ListenConfig{}).Listen(t.Context(), "tcp", addr)
	require.NoError(t, err)
	srv.Start()
	require.NoError(t, <-done)
	assert.Len(t, srv.Requests(), 1)
}

func TestNoRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		retry   otlpwire.RetryConfig
		wantErr string
	}{
		{name: "permanent status", status: http.StatusBadRequest, retry: fastRetry, wantErr: "400 Bad Request (body: try later)"},
		{name: "retry disabled", status: http.StatusServiceUnavailable, wantErr: "503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCollector(t)
			srv.setRespond(failFirst(1, tc.status, nil))
			exp := newExporter(t, srv.URL, otlpwire.Config{Retry: tc.retry})
			err := exp.ExportSpans(t.Context(), stubSpans())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), "export 4 spans to "+srv.URL+"/v1/traces")
			assert.Len(t, srv.Requests(), 1)
		})
	}
}

// A redirect is neither followed nor retried (security finding 5): the
// export and its headers stay away from the redirect's target.
func TestRedirectNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			target := newCollector(t)
			srv := newCollector(t)
			srv.setRespond(failFirst(10, status, map[string]string{"Location": target.URL + "/v1/traces"}))
			exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry, Headers: map[string]string{"X-Api-Key": "secret-key"}})
			err := exp.ExportSpans(t.Context(), stubSpans())
			require.ErrorIs(t, err, otlpwire.ErrRedirect)
			assert.Contains(t, err.Error(), http.StatusText(status))
			assert.NotContains(t, err.Error(), "secret-key")
			assert.Len(t, srv.Requests(), 1, "not retried")
			assert.Empty(t, target.Requests())
		})
	}
}

func TestPartialSuccess(t *testing.T) {
	respond := func(ctype string, resp *coltracepb.ExportTraceServiceResponse) func(int, http.ResponseWriter) {
		return func(_ int, w http.ResponseWriter) {
			b, err := proto.Marshal(resp)
			if err != nil {
				panic(err)
			}
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write(b)
		}
	}
	rejected := &coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		RejectedSpans: 3, ErrorMessage: "spans too old",
	}}
	for _, tc := range []struct {
		name    string
		respond func(int, http.ResponseWriter)
		want    *otlpwire.PartialSuccessError
	}{
		{name: "rejected spans", respond: respond("application/x-protobuf", rejected),
			want: &otlpwire.PartialSuccessError{RejectedSpans: 3, Message: "spans too old"}},
		{name: "content type parameters", respond: respond("Application/X-Protobuf; charset=binary", rejected),
			want: &otlpwire.PartialSuccessError{RejectedSpans: 3, Message: "spans too old"}},
		{name: "warning only", respond: respond("application/x-protobuf", &coltracepb.ExportTraceServiceResponse{
			PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "deprecated field"}}),
			want: &otlpwire.PartialSuccessError{Message: "deprecated field"}},
		{name: "empty partial success", respond: respond("application/x-protobuf", &coltracepb.ExportTraceServiceResponse{
			PartialSuccess: &coltracepb.ExportTracePartialSuccess{}})},
		{name: "empty response", respond: respond("application/x-protobuf", &coltracepb.ExportTraceServiceResponse{})},
		{name: "not protobuf", respond: func(_ int, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ok"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCollector(t)
			srv.setRespond(tc.respond)
			exp := newExporter(t, srv.URL, otlpwire.Config{Retry: fastRetry})
			err := exp.ExportSpans(t.Context(), stubSpans())
			assert.Len(t, srv.Requests(), 1, "a partial success is not retried")
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var ps *otlpwire.PartialSuccessError
			require.ErrorAs(t, err, &ps)
			assert.Equal(t, tc.want, ps)
			assert.Contains(t, err.Error(), "OTLP partial success")
		})
	}
}

func TestUndecodableResponse(t *testing.T) {
	srv := newCollector(t)
	srv.setRespond(func(_ int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write([]byte{0xff, 0xff})
	})
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry})
	assert.ErrorContains(t, exp.ExportSpans(t.Context(), stubSpans()), "decode response")
}

func TestShutdown(t *testing.T) {
	srv := newCollector(t)
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry})
	require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
	require.NoError(t, exp.Shutdown(t.Context()))
	require.NoError(t, exp.Shutdown(t.Context()), "idempotent")
	assert.ErrorContains(t, exp.ExportSpans(t.Context(), stubSpans()), "shut down")
	assert.Len(t, srv.Requests(), 1, "nothing is sent after Shutdown")
}

// Shutdown waits for an export in progress.
func TestShutdownWaitsForExport(t *testing.T) {
	srv := newCollector(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	srv.setRespond(func(int, http.ResponseWriter) {
		close(arrived)
		<-release
	})
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry})
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(context.Background(), stubSpans()) }()
	<-arrived

	shut := make(chan error, 1)
	go func() { shut <- exp.Shutdown(context.Background()) }()
	select {
	case <-shut:
		t.Fatal("Shutdown returned while an export was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done)
	require.NoError(t, <-shut)
}

// When ctx ends first, Shutdown cancels the export in progress, which then
// fails.
func TestShutdownCancelsExport(t *testing.T) {
	srv := newCollector(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	srv.setRespond(func(int, http.ResponseWriter) {
		close(arrived)
		<-release
	})
	defer close(release)
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry})
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(context.Background(), stubSpans()) }()
	<-arrived

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, exp.Shutdown(ctx), context.DeadlineExceeded)
	err := <-done
	require.Error(t, err)
	assert.ErrorContains(t, err, "shut down")
}

// Concurrent exports each send their own batch intact.
func TestConcurrentExports(t *testing.T) {
	srv := newCollector(t)
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry, Compression: otlpwire.GzipCompression})
	const workers, exports = 4, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range exports {
				spans := batchOf(w, i, 1+i%7)
				assert.NoError(t, exp.ExportSpans(t.Context(), spans))
			}
		})
	}
	wg.Wait()
	require.NoError(t, exp.Shutdown(t.Context()))

	reqs := srv.Requests()
	require.Len(t, reqs, workers*exports)
	seen := map[trace.SpanID]bool{}
	for _, r := range reqs {
		req := decode(t, r.Body)
		require.Len(t, req.ResourceSpans, 1)
		spans := req.ResourceSpans[0].ScopeSpans[0].Spans
		want := batchOf(int(spans[0].SpanId[0]), int(spans[0].SpanId[1]), len(spans))
		for j, s := range spans {
			assert.Equal(t, want[j].SpanContext().SpanID(), trace.SpanID(s.SpanId))
			assert.Equal(t, want[j].Name(), s.Name)
			seen[trace.SpanID(s.SpanId)] = true
		}
	}
	want := 0
	for i := range exports {
		want += workers * (1 + i%7)
	}
	assert.Len(t, seen, want, "every span arrived once")
}

// batchOf returns n spans whose IDs encode (w, i, j).
func batchOf(w, i, n int) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, n)
	for j := range stubs {
		stubs[j] = tracetest.SpanStub{
			Name:        "span " + string(rune('a'+j)),
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(w), byte(i), byte(j)}}),
		}
	}
	return stubs.Snapshots()
}

// The exporter is a drop-in trace exporter for the SDK's batch processor.
func TestWithBatchSpanProcessor(t *testing.T) {
	srv := newCollector(t)
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Retry: otlpwire.DefaultRetry})
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	ctx, parent := tp.Tracer("test").Start(t.Context(), "parent")
	_, child := tp.Tracer("test").Start(ctx, "child")
	child.End()
	parent.End()
	require.NoError(t, tp.Shutdown(t.Context()))

	req := decode(t, srv.only(t).Body)
	spans := req.ResourceSpans[0].ScopeSpans[0].Spans
	require.Len(t, spans, 2)
	assert.Equal(t, "child", spans[0].Name)
	assert.Equal(t, parent.SpanContext().SpanID(), trace.SpanID(spans[0].ParentSpanId))
	assert.ErrorContains(t, exp.ExportSpans(t.Context(), batchOf(0, 0, 1)), "shut down",
		"the provider's shutdown shut the exporter down")
}

// A collector may answer before reading the whole body, so the transport
// can still be sending it after the response: the exporter must not reuse
// that buffer for the next export (the race detector watches).
func TestEarlyResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	exp := newExporter(t, srv.URL, otlpwire.Config{Retry: otlpwire.DefaultRetry})
	big := tracetest.SpanStubs{{Name: "big", Attributes: []attribute.KeyValue{
		attribute.String("payload", strings.Repeat("x", 8<<20)),
	}}}.Snapshots()
	for i := range 5 {
		spans := big
		if i%2 == 1 {
			spans = batchOf(i, i, 100)
		}
		assert.NoError(t, exp.ExportSpans(t.Context(), spans))
	}
}
