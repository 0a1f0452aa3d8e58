// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

const (
	contentType = "application/x-protobuf"
	userAgent   = "kretrieve-otlpwire/1 (OTLP/HTTP protobuf)"
)

// errShutdown is returned by ExportSpans after Shutdown, and is the cause
// of the cancellation of exports still running when Shutdown gives up
// waiting for them.
var errShutdown = errors.New("otlpwire: exporter is shut down")

// Exporter is an [sdktrace.SpanExporter] that sends spans to an OTLP/HTTP
// collector as protobuf. It is safe for concurrent use.
type Exporter struct {
	s         settings
	client    *http.Client
	transport *http.Transport
	batches   sync.Pool // *batch

	mu       sync.Mutex
	shutdown bool
	inflight sync.WaitGroup
	stop     context.Context // canceled when Shutdown stops waiting
	cancel   context.CancelCauseFunc
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New returns an exporter configured by cfg alone: it reads no environment
// variable. It does not connect: the first export does. An invalid
// endpoint URL is an error.
func New(cfg Config) (*Exporter, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("otlpwire: %w", err)
	}
	// A transport of our own so that Shutdown can close its connections
	// and nobody else's.
	transport := newTransport(s.tls)
	stop, cancel := context.WithCancelCause(context.Background())
	return &Exporter{
		s:         s,
		client:    &http.Client{Transport: transport, CheckRedirect: RefuseRedirect},
		transport: transport,
		batches:   sync.Pool{New: func() any { return new(batch) }},
		stop:      stop,
		cancel:    cancel,
	}, nil
}

// ErrRedirect is the cause of an export refused because the collector
// answered with a redirect (3xx): no OTLP exporter of kretrieve follows
// one, since following it would send the export and its headers
// (credentials) to wherever the redirect points, another host or plain
// HTTP. It is not retried.
var ErrRedirect = errors.New("OTLP exporters follow no redirect")

// RefuseRedirect is an [http.Client] CheckRedirect function that follows
// no redirect: the request fails with an error wrapping [ErrRedirect] that
// names the collector's status and the redirect's target (with any
// userinfo redacted), never the request's headers.
func RefuseRedirect(req *http.Request, via []*http.Request) error {
	status := "a redirect"
	if req.Response != nil {
		status = req.Response.Status
	}
	from := "the collector"
	if len(via) > 0 {
		from = via[len(via)-1].URL.Redacted()
	}
	return fmt.Errorf("%w: %s answered %s to %s; export not sent there", ErrRedirect, from, status, req.URL.Redacted())
}

// NewHTTPClient returns an HTTP client for an OTLP exporter: the settings
// of [http.DefaultTransport] on a transport of its own, tlsConfig (nil:
// the system roots), timeout as [http.Client.Timeout] (0: none) and
// [RefuseRedirect]. Package tracing hands it to the SDK's OTLP/HTTP
// exporters.
func NewHTTPClient(tlsConfig *tls.Config, timeout time.Duration) *http.Client {
	return &http.Client{Transport: newTransport(tlsConfig), Timeout: timeout, CheckRedirect: RefuseRedirect}
}

// newTransport returns a transport with the settings of
// http.DefaultTransport and tlsConfig.
func newTransport(tlsConfig *tls.Config) *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		TLSClientConfig:       tlsConfig,
	}
}

// ExportSpans encodes spans into one request and sends it, retrying
// transient failures (see [RetryConfig]) until the export's timeout. It
// returns an error when the spans were not delivered, or when the collector
// reports some of them rejected (a [*PartialSuccessError]); the batch span
// processor hands the error to the OTel error handler. After
// [Exporter.Shutdown] it returns an error without sending anything.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if !e.begin() {
		return errShutdown
	}
	defer e.inflight.Done()

	b := e.batches.Get().(*batch)
	defer func() {
		// Runs after the request's context is canceled, which makes the
		// transport close any body it still holds; a batch whose body is
		// still open is left to the garbage collector instead.
		if b.openBodies.Load() == 0 {
			e.batches.Put(b)
		}
	}()
	n := b.enc.encode(spans)
	if n == 0 {
		return nil
	}
	body := b.enc.buf.bytes()
	if len(body) > maxRequestSize {
		return fmt.Errorf("otlpwire: export %d spans: request of %d bytes exceeds %d", n, len(body), maxRequestSize)
	}
	encoding := ""
	if e.s.compression == GzipCompression {
		var err error
		if body, err = b.gzip(body); err != nil {
			return fmt.Errorf("otlpwire: export %d spans: gzip: %w", n, err)
		}
		encoding = "gzip"
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopAfter := context.AfterFunc(e.stop, func() { cancel(context.Cause(e.stop)) })
	defer stopAfter()
	ctx, cancelTimeout := context.WithTimeout(ctx, e.s.timeout)
	defer cancelTimeout()

	if err := e.send(ctx, b, body, encoding); err != nil {
		return fmt.Errorf("otlpwire: export %d spans to %s: %w", n, e.s.url, err)
	}
	return nil
}

// begin registers an export unless the exporter is shut down.
func (e *Exporter) begin() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shutdown {
		return false
	}
	e.inflight.Add(1)
	return true
}

// Shutdown stops the exporter: later exports fail at once. It waits for
// exports in progress until ctx is done, then cancels them, and closes idle
// connections. It returns ctx's error if it had to cancel exports. Calls
// after the first return nil.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	first := !e.shutdown
	e.shutdown = true
	e.mu.Unlock()
	if !first {
		return nil
	}
	defer e.transport.CloseIdleConnections()

	done := make(chan struct{})
	go func() {
		e.inflight.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("otlpwire: shutdown: %w", ctx.Err())
	}
	e.cancel(errShutdown)
	<-done // canceled exports return promptly
	return err
}

// send posts body, retrying transient failures while the retry policy and
// ctx's deadline allow. When ctx ends during a retry, the error also
// reports the previous attempt's failure.
func (e *Exporter) send(ctx context.Context, b *batch, body []byte, encoding string) error {
	interval := e.s.retry.InitialInterval
	var prev error
	for attempt := 1; ; attempt++ {
		err := e.post(ctx, b, body, encoding)
		if err != nil && prev != nil && ctx.Err() != nil {
			err = fmt.Errorf("attempt %d: %w; previous attempt: %w", attempt, err, prev)
		}
		var te *transientError
		if err == nil || !e.s.retry.Enabled || !errors.As(err, &te) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		// Jitter of ±50% around the backoff interval, then at least what
		// the collector asked for.
		delay := time.Duration(float64(interval) * (0.5 + rand.Float64()))
		delay = max(delay, te.retryAfter)
		interval = min(time.Duration(float64(interval)*1.5), e.s.retry.MaxInterval)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
			return fmt.Errorf("no time left to retry in %s: %w", delay.Round(time.Millisecond), err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		case <-t.C:
		}
		prev = err
	}
}

// post makes one attempt. Transient failures are returned as a
// *transientError.
func (e *Exporter) post(ctx context.Context, b *batch, body []byte, encoding string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.s.url, nil)
	if err != nil {
		return err
	}
	req.Body, req.ContentLength = b.requestBody(body), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return b.requestBody(body), nil }
	for k, v := range e.s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", userAgent)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}

	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil || !retryableTransportError(err) {
			return err
		}
		return &transientError{err: err}
	}
	defer resp.Body.Close()
	respBody, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	_, _ = io.Copy(io.Discard, resp.Body) // let the connection be reused
	if readErr == nil && len(respBody) > maxResponseSize {
		readErr = fmt.Errorf("response body exceeds %d bytes", maxResponseSize)
	}

	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if readErr != nil {
			return fmt.Errorf("read response: %w", readErr)
		}
		return partialSuccess(resp.Header.Get("Content-Type"), respBody)
	}

	msg := strings.TrimSpace(string(respBody))
	if msg == "" {
		msg = "(empty)"
	}
	err = fmt.Errorf("%s (body: %s)", resp.Status, msg)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return &transientError{err: err, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	default:
		return err
	}
}

// retryableTransportError reports whether a failed round trip may succeed
// if tried again: not when the collector redirected, the server's
// certificate was refused, the server refused ours (a TLS alert) or the
// server does not speak TLS.
func retryableTransportError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var opErr *net.OpError
	switch {
	case errors.Is(err, ErrRedirect), errors.As(err, &certErr), errors.As(err, &recErr):
		return false
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		return false
	}
	return true
}

// transientError is a failed attempt worth retrying.
type transientError struct {
	err        error
	retryAfter time.Duration // from the Retry-After header, 0 when absent
}

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, int64(time.Duration(1<<63-1)/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// PartialSuccessError reports that the collector accepted a request but
// rejected some of its spans (ExportTraceServiceResponse.partial_success).
// The rejected spans are not retried.
type PartialSuccessError struct {
	// RejectedSpans is the number of spans the collector rejected.
	RejectedSpans int64
	// Message is the collector's explanation, possibly empty.
	Message string
}

// Error reports the number of rejected spans and the collector's message.
func (e *PartialSuccessError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("OTLP partial success: %d spans rejected: %s", e.RejectedSpans, msg)
}

// partialSuccess decodes a successful response and returns a
// *PartialSuccessError if it reports rejected spans or a message. Like
// otlptracehttp, it ignores bodies that are not protobuf.
func partialSuccess(ctype string, body []byte) error {
	mt, _, _ := strings.Cut(ctype, ";")
	if len(body) == 0 || !strings.EqualFold(strings.TrimSpace(mt), contentType) {
		return nil
	}
	var resp coltracepb.ExportTraceServiceResponse
	if err := proto.Unmarshal(body, &resp); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	ps := resp.GetPartialSuccess()
	if ps.GetRejectedSpans() == 0 && ps.GetErrorMessage() == "" {
		return nil
	}
	return &PartialSuccessError{RejectedSpans: ps.GetRejectedSpans(), Message: ps.GetErrorMessage()}
}

// batch holds the reusable buffers of one export.
type batch struct {
	enc   encoder
	gz    *gzip.Writer
	gzBuf bytes.Buffer

	// openBodies counts the request bodies over the buffers that the HTTP
	// transport has not closed yet. It may close one after Client.Do
	// returns, from another goroutine: the buffers must not be reused
	// before.
	openBodies atomic.Int32
}

// requestBody returns a request body reading p, one of the batch's buffers.
func (b *batch) requestBody(p []byte) io.ReadCloser {
	b.openBodies.Add(1)
	return &requestBody{Reader: bytes.NewReader(p), b: b}
}

type requestBody struct {
	*bytes.Reader
	b      *batch
	closed atomic.Bool
}

func (r *requestBody) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.b.openBodies.Add(-1)
	}
	return nil
}

// gzip compresses body into the batch's reused buffer.
func (b *batch) gzip(body []byte) ([]byte, error) {
	b.gzBuf.Reset()
	if b.gz == nil {
		b.gz = gzip.NewWriter(&b.gzBuf)
	} else {
		b.gz.Reset(&b.gzBuf)
	}
	if _, err := b.gz.Write(body); err != nil {
		return nil, err
	}
	if err := b.gz.Close(); err != nil {
		return nil, err
	}
	return b.gzBuf.Bytes(), nil
}
